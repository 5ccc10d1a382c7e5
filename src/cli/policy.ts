import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDocument, visit } from 'yaml';
import { DEFAULT_NAMESPACE } from '../api/v1alpha1/index.ts';
import { callAdminSocket, localActor } from '../admin/socket.ts';
import { describeAgentScope } from '../keys/agentScope.ts';
import { CliError, dataDirOption, parse } from '../lib/args.ts';
import { AgentWalletError } from '../lib/errors.ts';
import { applyPolicy, deletePolicy, getPolicy, listPolicies, setSuspended, type PolicyDocument, type PolicySummary } from '../policy/manage.ts';
import { openEmbeddedStore, storeOwner } from '../store/embedded/index.ts';
import { auditedStore, auditLogPath, fileAuditLog } from '../store/audit/index.ts';
import type { ResourceStore } from '../store/types.ts';
import { EXIT } from './output.ts';
import { runCommand } from './command.ts';
import { serviceDataDir } from './serviceDataDir.ts';

/**
 * `agent-wallet policy apply|list|get|delete|suspend|resume`: the operator writes AgentPolicies (docs/policies.md),
 * as `keys` writes ApiClients: through the running service's admin socket, on a data directory no service owns, or
 * with --kube on a cluster's API server. No API key is involved: a key cannot write a policy.
 */
export async function runPolicy(argv: string[]): Promise<number> {
  // An agent's reads with its API key (GET /policy, POST /policy/evaluate); the rest is the operator's.
  if (argv[0] === 'show' || argv[0] === 'test') {
    const { policyShowCommand, policyTestCommand } = await import('./commands/policyAgent.ts');
    return runCommand(argv[0] === 'show' ? policyShowCommand : policyTestCommand, argv.slice(1));
  }
  try {
    return await policyCommand(argv);
  } catch (e) {
    const exit = e instanceof AgentWalletError ? POLICY_ERROR_EXIT[e.code] : undefined;
    if (exit === undefined) throw e;
    process.stderr.write(`agent-wallet: ${(e as AgentWalletError).shortMessage}\n`);
    return exit;
  }
}

/**
 * Exit codes of the policy-management errors (docs/cli.md), raised by the store directly or carried back from the
 * admin socket with the same codes: a policy that cannot be applied as written is a usage error (2), a policy or key
 * that is not there a refusal (3), a store that cannot answer unavailability (5).
 */
const POLICY_ERROR_EXIT: Readonly<Record<string, number>> = {
  invalid_policy: EXIT.usage,
  invalid_request: EXIT.usage,
  unknown_api_client: EXIT.refused,
  policy_not_found: EXIT.refused,
  store_unavailable: EXIT.unavailable,
};

const USAGE = 'usage: policy apply -f FILE | list [--client ID] | get NAME | delete NAME | suspend NAME | resume NAME | show --agent-id ID | test --agent-id ID … (see agent-wallet policy --help)';

async function policyCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...dataDirOption,
    file: { type: 'string', short: 'f' },
    client: { type: 'string' },
    json: { type: 'boolean', default: false },
    kube: { type: 'boolean', default: false },
    namespace: { type: 'string' },
    kubeconfig: { type: 'string' },
  });
  const [action, name, ...extra] = positionals;
  if (extra.length > 0) throw new CliError(USAGE);
  const json = values.json === true;
  const kube = values.kube === true;
  const namespace = kube ? (values.namespace ?? process.env.POD_NAMESPACE ?? DEFAULT_NAMESPACE) : DEFAULT_NAMESPACE;
  const dataDir = kube ? '' : await serviceDataDir(values['data-dir'], 'policies');
  const storeDir = join(dataDir, 'store');
  const owned = !kube && (await storeOwner(storeDir));

  /** The action on the store itself: the cluster's API server (--kube), or the data directory no service owns. */
  const direct = async <T>(fn: (store: ResourceStore) => Promise<T>): Promise<T> => {
    // The data directory's audit log records the change (the API server's does with --kube).
    const store = kube
      ? await openKubeStore(values.kubeconfig, namespace)
      : auditedStore(await openEmbeddedStore({ dir: storeDir }), fileAuditLog(auditLogPath(dataDir)), `${localActor()} (cli --data-dir)`);
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  };
  const named = (verb: string): string => {
    if (!name) throw new CliError(`usage: policy ${verb} NAME`);
    return name;
  };
  const path = (n: string, tail = '') => `/policies/${encodeURIComponent(n)}${tail}`;

  switch (action) {
    case 'apply': {
      if (name !== undefined || values.file === undefined) throw new CliError('usage: policy apply -f FILE (JSON or YAML: { name, spec }; - reads stdin)');
      const doc = await readPolicyFile(values.file);
      const out = (owned
        ? await callAdminSocket(dataDir, 'PUT', path(doc.name), doc.spec)
        : await direct((s) => applyPolicy(s, namespace, doc))) as { created: boolean; policy: PolicySummary };
      process.stdout.write(json ? JSON.stringify(out) + '\n' : `${out.created ? 'created' : 'updated'} policy ${describe(out.policy)}\n`);
      return 0;
    }
    case 'list': {
      if (name !== undefined) throw new CliError('usage: policy list [--client ID]');
      const client = values.client;
      const policies = (owned
        ? await callAdminSocket(dataDir, 'GET', `/policies${client === undefined ? '' : `?client=${encodeURIComponent(client)}`}`)
        : await direct((s) => listPolicies(s, namespace, client === undefined ? {} : { apiClient: client }))) as PolicySummary[];
      if (json) process.stdout.write(JSON.stringify(policies, null, 2) + '\n');
      else if (policies.length === 0) process.stdout.write('no policies\n');
      else for (const p of policies) process.stdout.write(listLine(p) + '\n');
      return 0;
    }
    case 'get': {
      const n = named('get');
      const doc = (owned ? await callAdminSocket(dataDir, 'GET', path(n)) : await direct((s) => getPolicy(s, namespace, n))) as PolicyDocument;
      // The document as written, ready to edit and apply again.
      process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
      return 0;
    }
    case 'delete': {
      const n = named('delete');
      await (owned ? callAdminSocket(dataDir, 'DELETE', path(n)) : direct((s) => deletePolicy(s, namespace, n)));
      process.stdout.write(json ? JSON.stringify({ name: n, deleted: true }) + '\n' : `deleted policy ${n}\n`);
      return 0;
    }
    case 'suspend':
    case 'resume': {
      const n = named(action);
      const suspended = action === 'suspend';
      const p = (owned
        ? await callAdminSocket(dataDir, 'POST', path(n, `/${action}`))
        : await direct((s) => setSuspended(s, namespace, n, suspended))) as PolicySummary;
      if (json) process.stdout.write(JSON.stringify(p) + '\n');
      else if (suspended)
        process.stdout.write(`suspended policy ${describe(p)}: nothing more is signed for them until \`policy resume ${p.name}\`\n`);
      else process.stdout.write(`resumed policy ${describe(p)}\n`);
      return 0;
    }
    default:
      throw new CliError(USAGE);
  }
}

/** `bot-1-usdc (key abc…, agent id "bot-1", 2 rules)`. */
const describe = (p: PolicySummary) =>
  `${p.name} (key ${p.api_client}, ${p.agents ? describeAgentScope(p.agents) : 'every agent of the key'}, ${p.rules} rule${p.rules === 1 ? '' : 's'}${p.budgets > 0 ? `, ${p.budgets} budget${p.budgets === 1 ? '' : 's'}` : ''})`;

function listLine(p: PolicySummary): string {
  const window = p.valid_from || p.valid_until ? `  valid ${p.valid_from ?? '…'} to ${p.valid_until ?? '…'}` : '';
  const unreadable = p.unreadable !== undefined ? `  UNREADABLE, accepts nothing: ${p.unreadable}` : '';
  return `${p.name}  ${p.api_client}  ${p.suspended ? 'SUSPENDED' : 'active   '}  ${String(p.rules).padStart(3)} rule${p.rules === 1 ? ' ' : 's'}  ${p.agents ? describeAgentScope(p.agents) : 'every agent of the key'}${window}${unreadable}`;
}

/**
 * The policy document of FILE (`-`: stdin): JSON, or YAML. In YAML an unquoted `0x83…` or `1000000` would become a
 * number (a hex address losing its checksum case, an amount its digits past 2^53); no field of a policy is a
 * number, so every plain scalar YAML reads as a number is kept as the text written.
 */
async function readPolicyFile(file: string): Promise<{ name: string; spec: unknown }> {
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let doc: unknown;
  if (file.endsWith('.json')) {
    try {
      doc = JSON.parse(text);
    } catch (e) {
      throw new AgentWalletError('invalid_policy', `${file} is not JSON: ${(e as Error).message}`);
    }
  } else {
    const parsed = parseDocument(text);
    if (parsed.errors.length > 0) throw new AgentWalletError('invalid_policy', `${file} is not YAML or JSON: ${parsed.errors[0]!.message.split('\n')[0]}`);
    visit(parsed, {
      Scalar(_, node) {
        if (typeof node.value === 'number' && node.source !== undefined) node.value = node.source;
      },
    });
    doc = parsed.toJS();
  }
  const { name, spec, ...rest } = (doc !== null && typeof doc === 'object' ? doc : {}) as { name?: unknown; spec?: unknown };
  const extra = Object.keys(rest)[0];
  if (typeof name !== 'string' || spec === undefined || extra !== undefined) {
    throw new AgentWalletError('invalid_policy', `${file}: a policy is { "name": …, "spec": … }${extra !== undefined ? `, without ${JSON.stringify(extra)}` : ''}`);
  }
  return { name, spec };
}

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

async function openKubeStore(kubeconfig: string | undefined, namespace: string): Promise<ResourceStore> {
  // Loaded only for --kube: the Kubernetes client is a large import the embedded CLI does not need.
  const [{ createKubeStore }, { loadKubeConfig }] = await Promise.all([import('../store/kube/index.ts'), import('../roles/cluster/runtime.ts')]);
  return createKubeStore({ kubeConfig: loadKubeConfig(kubeconfig), namespace });
}
