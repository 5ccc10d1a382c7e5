import { DEFAULT_NAMESPACE, PAYMENT_MODES, type AgentScope, type PaymentMode } from '../api/v1alpha1/index.ts';
import { describeAgentScope, OperatorAgentScopeSchema } from '../keys/agentScope.ts';
import { callAdminSocket, localActor } from '../admin/socket.ts';
import { createKey, listKeys, revokeKey, rotateKey, rotateWebhookSecret, setKeyMode, type KeySummary } from '../keys/manage.ts';
import { openFileWebhookSecrets, webhookSecretsDir } from '../webhooks/secrets/files.ts';
import type { WebhookSecretStore } from '../webhooks/secrets/types.ts';
import { openEmbeddedStore, storeOwner } from '../store/embedded/index.ts';
import { auditedStore, auditLogPath, fileAuditLog } from '../store/audit/index.ts';
import type { ResourceStore } from '../store/types.ts';
import { CliError, dataDirOption, parse } from '../lib/args.ts';
import { join } from 'node:path';
import { AgentWalletError } from '../lib/errors.ts';
import { EXIT } from './output.ts';
import { serviceDataDir } from './serviceDataDir.ts';

/**
 * `agent-wallet keys ...`: when a service owns the data directory's store, the action goes through its admin
 * socket; otherwise the CLI opens the store itself (and holds its lock for the moment it runs).
 */
export async function runKeys(argv: string[]): Promise<number> {
  try {
    return await keysCommand(argv);
  } catch (e) {
    const exit = exitOfKeyError(e);
    if (exit === undefined) throw e;
    process.stderr.write(`agent-wallet: ${(e as AgentWalletError).shortMessage}\n`);
    return exit;
  }
}

/**
 * Exit codes of the key-management errors, as the client commands' (docs/cli.md): a missing or revoked key is a
 * refusal (3), a store that cannot answer is unavailability (5). Raised by the store directly (KeyError) or
 * carried back from the admin socket with the same codes; anything else is a bug and keeps its stack trace.
 */
const KEY_ERROR_EXIT: Readonly<Record<string, number>> = {
  key_not_found: EXIT.refused,
  key_revoked: EXIT.refused,
  invalid_request: EXIT.usage,
  store_unavailable: EXIT.unavailable,
};

function exitOfKeyError(e: unknown): number | undefined {
  return e instanceof AgentWalletError ? KEY_ERROR_EXIT[e.code] : undefined;
}

/** `--agent-id X` binds a new key to one agent id, `--agent-id-prefix P` to those starting with P; not both. */
function agentScopeOf(agentId: string | undefined, prefix: string | undefined): { agentScope?: AgentScope } {
  if (agentId !== undefined && prefix !== undefined) throw new CliError('give --agent-id or --agent-id-prefix, not both');
  const value = agentId ?? prefix;
  if (value === undefined) return {};
  const scope = OperatorAgentScopeSchema.safeParse({ match: agentId !== undefined ? 'exact' : 'prefix', agentId: value });
  if (!scope.success) throw new CliError(`--agent-id${agentId !== undefined ? '' : '-prefix'}: ${scope.error.issues[0]?.message ?? 'not an agent id'}`);
  return { agentScope: scope.data };
}

async function keysCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...dataDirOption,
    mode: { type: 'string' },
    name: { type: 'string' },
    json: { type: 'boolean', default: false },
    kube: { type: 'boolean', default: false },
    namespace: { type: 'string' },
    kubeconfig: { type: 'string' },
    'overlap-seconds': { type: 'string' },
    'agent-id': { type: 'string' },
    'agent-id-prefix': { type: 'string' },
  });
  const [action, id] = positionals;
  const json = values.json === true;
  const kube = values.kube === true;
  // A cluster's ApiClients live in the API server: no data dir, no admin socket.
  const namespace = values.namespace ?? process.env.POD_NAMESPACE ?? DEFAULT_NAMESPACE;
  const dataDir = kube ? '' : await serviceDataDir(values['data-dir'], 'keys');
  const storeDir = join(dataDir, 'store');
  const owned = !kube && (await storeOwner(storeDir));

  const direct = async <T>(fn: (store: ResourceStore, namespace: string, secrets: WebhookSecretStore) => Promise<T>): Promise<T> => {
    // Loaded only for --kube: the Kubernetes client is a large import the embedded CLI does not need.
    const { store, secrets, close } = kube
      ? await openKube(values.kubeconfig, namespace)
      : {
          // The data directory's audit log records the change (the API server's does with --kube).
          store: auditedStore(await openEmbeddedStore({ dir: storeDir }), fileAuditLog(auditLogPath(dataDir)), `${localActor()} (cli --data-dir)`),
          secrets: openFileWebhookSecrets(webhookSecretsDir(dataDir)),
          close: () => undefined,
        };
    try {
      return await fn(store, kube ? namespace : DEFAULT_NAMESPACE, secrets);
    } finally {
      close();
      await store.close();
    }
  };

  switch (action) {
    case 'create': {
      const mode = values.mode as PaymentMode | undefined;
      if (!mode || !PAYMENT_MODES.includes(mode)) throw new CliError(`--mode must be one of ${PAYMENT_MODES.join(', ')}`);
      const opts = { mode, ...(values.name !== undefined && { name: values.name }), ...agentScopeOf(values['agent-id'], values['agent-id-prefix']) };
      const out = (owned
        ? await callAdminSocket(dataDir, 'POST', '/keys', opts)
        : await direct((s, ns, secrets) => createKey(s, opts, ns, secrets))) as { api_key: string; webhook_secret?: string; key: KeySummary };
      printKey(out, json, 'created');
      return 0;
    }
    case 'list': {
      const keys = (owned ? await callAdminSocket(dataDir, 'GET', '/keys') : await direct((s, ns) => listKeys(s, ns))) as KeySummary[];
      if (json) process.stdout.write(JSON.stringify(keys, null, 2) + '\n');
      else if (keys.length === 0) process.stdout.write('no keys\n');
      else
        for (const k of keys)
          process.stdout.write(
            `${k.id}  ${k.mode.padEnd(9)} ${k.enabled ? 'enabled ' : 'revoked '} ${k.created_at ?? ''}  ${k.name ?? ''}` +
              `${k.agent_scope ? `  (${describeAgentScope(k.agent_scope)})` : ''}\n`,
          );
      return 0;
    }
    case 'revoke': {
      if (!id) throw new CliError('usage: keys revoke <id>');
      const k = (owned
        ? await callAdminSocket(dataDir, 'POST', `/keys/${encodeURIComponent(id)}/revoke`)
        : await direct((s, ns) => revokeKey(s, id, ns))) as KeySummary;
      process.stdout.write(json ? JSON.stringify(k) + '\n' : `revoked ${k.id}\n`);
      return 0;
    }
    case 'set-mode': {
      const mode = values.mode as PaymentMode | undefined;
      if (!id || !mode || !PAYMENT_MODES.includes(mode)) throw new CliError(`usage: keys set-mode <id> --mode ${PAYMENT_MODES.join('|')}`);
      const k = (owned
        ? await callAdminSocket(dataDir, 'POST', `/keys/${encodeURIComponent(id)}/mode`, { mode })
        : await direct((s, ns) => setKeyMode(s, id, mode, ns))) as KeySummary;
      process.stdout.write(json ? JSON.stringify(k) + '\n' : `key ${k.id} is now ${k.mode}\n`);
      return 0;
    }
    case 'rotate': {
      if (!id) throw new CliError('usage: keys rotate <id>');
      const out = (owned
        ? await callAdminSocket(dataDir, 'POST', `/keys/${encodeURIComponent(id)}/rotate`)
        : await direct((s, ns) => rotateKey(s, id, ns))) as { api_key: string; key: KeySummary };
      printKey(out, json, 'rotated');
      return 0;
    }
    case 'rotate-webhook-secret': {
      if (!id) throw new CliError('usage: keys rotate-webhook-secret <id> [--overlap-seconds N]');
      const overlap = values['overlap-seconds'];
      const overlapSeconds = overlap === undefined ? undefined : Number(overlap);
      if (overlapSeconds !== undefined && !(Number.isInteger(overlapSeconds) && overlapSeconds >= 0 && overlapSeconds <= 30 * 86_400)) {
        throw new CliError('--overlap-seconds must be a whole number of seconds from 0 to 2592000 (30 days)');
      }
      const body = overlapSeconds === undefined ? {} : { overlapSeconds };
      const out = (owned
        ? await callAdminSocket(dataDir, 'POST', `/keys/${encodeURIComponent(id)}/rotate-webhook-secret`, body)
        : await direct((s, ns, secrets) => rotateWebhookSecret(s, secrets, id, body, ns))) as { webhook_secret: string; key: KeySummary };
      if (json) {
        process.stdout.write(JSON.stringify({ webhook_secret: out.webhook_secret, key: out.key }) + '\n');
        return 0;
      }
      const until = out.key.webhook_previous_secret_valid_until;
      process.stdout.write(
        `new webhook signing secret for key ${out.key.id}\n\n  ${out.webhook_secret}\n\n` +
          (until ? `The previous secret also signs every delivery until ${until}: move your receiver to the new one before then.\n` : '') +
          'This is the only time the secret is shown.\n',
      );
      return 0;
    }
    default:
      throw new CliError('usage: keys create|list|revoke|set-mode|rotate|rotate-webhook-secret (see agent-wallet help)');
  }
}

function printKey(out: { api_key: string; webhook_secret?: string; key: KeySummary }, json: boolean, verb: string): void {
  if (json) {
    process.stdout.write(JSON.stringify({ api_key: out.api_key, ...(out.webhook_secret !== undefined && { webhook_secret: out.webhook_secret }) }) + '\n');
    return;
  }
  process.stdout.write(
    `${verb} key ${out.key.id} (mode ${out.key.mode}${out.key.agent_scope ? `, for ${describeAgentScope(out.key.agent_scope)} only` : ''})\n\n  ${out.api_key}\n\n` +
      (out.webhook_secret !== undefined
        ? `Webhook signing secret (verifies the deliveries to callback_url; docs/webhooks.md):\n\n  ${out.webhook_secret}\n\n` +
          'This is the only time the key and the secret are shown: store them in your agent\'s server-side configuration.\n'
        : 'This is the only time the key is shown: store it in your agent\'s server-side configuration.\n'),
  );
}

async function openKube(kubeconfig: string | undefined, namespace: string) {
  const [{ createKubeStore }, { loadKubeConfig }, { kubeWebhookSecrets }] = await Promise.all([
    import('../store/kube/index.ts'),
    import('../roles/cluster/runtime.ts'),
    import('../webhooks/secrets/kube.ts'),
  ]);
  const kubeConfig = loadKubeConfig(kubeconfig);
  const secrets = kubeWebhookSecrets({ kubeConfig, namespace });
  return { store: createKubeStore({ kubeConfig, namespace }), secrets, close: () => secrets.close() };
}
