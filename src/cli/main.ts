import { CliError } from '../lib/args.ts';
import { runCommand } from './command.ts';
import { CLIENT_COMMANDS } from './commands/index.ts';
import { familyHelp, protocolCommandFor } from './commands/protocols.ts';
import { devOptionsHelp } from '../roles/devOptions.ts';
import { DOCTOR_HELP, SERVE_HELP } from './doctorHelp.ts';
import { PAYMASTER_HELP } from './paymasterHelp.ts';

const clientUsage = () =>
  CLIENT_COMMANDS.map((c) => `  ${c.name.padEnd(22)}  ${c.summary}`).join('\n');

/**
 * The service commands' help, one section each: `agent-wallet <command> --help` prints its own, `help` all of
 * them. The dev command's options come from the table its role parses (src/roles/devOptions.ts).
 */
const SERVICE_HELP: Readonly<Record<string, string>> = {
  dev: `  dev [options]           run every role in one process: devnet, store, controller, chain workers, gateway,
                          and the aUSD faucet on its own port (what \`npm start\` runs; \`npm start -- <options>\`)
${devOptionsHelp('    ')}
`,
  'faucet-server': `  faucet-server           the aUSD faucet alone: a page and a JSON API that send test aUSD to a smart wallet
                          --port N (AGENT_WALLET_FAUCET_PORT, default 8090)  --host H (default 127.0.0.1)
                          --data-dir D: the devnet of a running \`dev\` (its devnet/manifest.json); or
                          --config F (AGENT_WALLET_FAUCET_CONFIG): a deployment's YAML; each chain's worker sends
`,
  gateway: `  gateway                 cluster role: the HTTP API (--port, default from the config: 8080)
`,
  controller: `  controller              cluster role: the reconcilers; run 2 replicas, one leads (Lease)
`,
  'chain-worker': `  chain-worker --chain C  cluster role: one chain's worker and bundler, served over gRPC
                          cluster roles take --config F (AGENT_WALLET_CONFIG, default /etc/agent-wallet/config.yaml),
                          --kubeconfig F (default: in-cluster or $KUBECONFIG), --ops-port N (/metrics, /livez, /readyz)
`,
  keys: `  keys create --mode sponsored|auto|manual [--name N] [--agent-id A | --agent-id-prefix P] [--json]
                          --agent-id binds the key to one agent id, --agent-id-prefix to those starting with P:
                          it can act for no other (docs/policies.md)
  keys list [--json]
  keys revoke <id> [--json]
  keys set-mode <id> --mode sponsored|auto|manual [--json]
                          its requests waiting for a payment take the new mode too (docs/payments.md)
  keys rotate <id> [--json]
  keys rotate-webhook-secret <id> [--overlap-seconds N (default 86400)] [--json]
                          operator key management, in the store of the service: --data-dir D (or
                          AGENT_WALLET_DATA_DIR) names it; without either, the running \`dev\` service's (the only
                          one running for this user), else nothing is done. Works while the service runs (through
                          its admin socket). With --kube [--namespace NS] [--kubeconfig F] it manages the
                          ApiClients of a cluster instead. create and rotate-webhook-secret print the webhook
                          signing secret once
`,
  policy: `  policy apply -f FILE [--json]
                          creates or replaces the AgentPolicy FILE describes (JSON or YAML: { name, spec }; - for
                          stdin); refused whole, naming the field or rule, if any part cannot be applied. Keeps a
                          suspension unless FILE sets spec.suspended (docs/policies.md, "Writing policies")
  policy list [--client ID] [--json]
  policy get NAME         prints { name, spec } as JSON: edit it and apply it again
  policy delete NAME [--json]
  policy suspend NAME [--json]
  policy resume NAME [--json]
                          the kill switch: nothing more is signed for the agents the policy governs, until resume.
                          Operator policy management, on the store of the service as for \`keys\` (--data-dir D,
                          the running \`dev\` service's, or --kube [--namespace NS] [--kubeconfig F])
  policy show --agent-id ID [--json]
  policy test --agent-id ID [--chain C] (--to A (--data HEX | --abi SIG --function F [ARG...]) | --file F) [--json]
                          an agent's own view, with its API key (AGENT_WALLET_API_KEY): the policies that govern it,
                          and a dry run of a call against them (exit 3 when refused; nothing is sent)
`,
  serve: SERVE_HELP,
  doctor: DOCTOR_HELP,
  paymaster: PAYMASTER_HELP,
  webhooks: `  webhooks verify --header "webhook-id: …" --header "webhook-timestamp: …" --header "webhook-signature: …"
                  [--body-file F (default stdin)] [--tolerance-seconds N] [--json]
                          checks a captured webhook delivery against the secret in AGENT_WALLET_WEBHOOK_SECRET
`,
};

const USAGE = `agent-wallet <command> [options]

Agents' commands (clients of the HTTP API: AGENT_WALLET_API_KEY, AGENT_WALLET_BASE_URL; \`<command> --help\` for each):
${clientUsage()}

Protocol commands: \`agent-wallet <slug> <endpoint>\`, e.g. \`agent-wallet lend-b-v3 supply --help\` (\`agent-wallet protocols\` lists them)

Devnet commands (the local devnet of \`npm start\` only):
  devnet fund             native ETH or a devnet token (WETH, USDC, …) to an agent's wallet (\`devnet fund --help\`)

Service commands (\`<command> --help\` for each):
${Object.values(SERVICE_HELP).join('')}  help                    this text
`;

/** One service command's help: its usage line and its section of the usage text. */
export const serviceHelp = (command: string): string => `usage: agent-wallet ${command} [options]\n\n${SERVICE_HELP[command]}`;

const DEVNET_USAGE = `agent-wallet devnet <command>

  fund    native ETH or a devnet token (WETH, USDC, USDT, aUSD) to an agent's wallet: \`agent-wallet devnet fund --help\`
`;

const SERVICE_COMMANDS = new Set(Object.keys(SERVICE_HELP));

/** Options of the faucet service that the `faucet` client command does not take: a sign the service was meant. */
const FAUCET_SERVER_OPTIONS = new Set(['--data-dir', '--config', '--port', '--host', '--quiet']);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // `faucet` asks a faucet for aUSD (a client command); the faucet service is `faucet-server`.
  if (command === 'faucet' && rest.some((a) => FAUCET_SERVER_OPTIONS.has(a.split('=')[0]!))) {
    throw new CliError('`agent-wallet faucet` asks a faucet for test aUSD; the faucet service itself is `agent-wallet faucet-server`');
  }
  const client = CLIENT_COMMANDS.find((c) => c.name === command);
  if (client) return runCommand(client, rest);
  if (command === 'devnet') {
    if (rest[0] === 'fund') return runCommand((await import('./commands/devnetFund.ts')).devnetFundCommand, rest.slice(1));
    process.stdout.write(DEVNET_USAGE);
    return rest[0] === undefined || rest[0] === '--help' || rest[0] === '-h' ? 0 : 2;
  }
  // `agent-wallet <protocol slug or name> <endpoint> …`: the commands generated from the protocol registry.
  const protocol = command === undefined ? undefined : protocolCommandFor(command, rest[0]);
  if (protocol) {
    if (protocol.command) return runCommand(protocol.command, rest.slice(1));
    process.stdout.write(familyHelp(protocol.family));
    return rest[0] === undefined || rest[0] === '--help' || rest[0] === '-h' ? 0 : 2;
  }
  if (command !== undefined && SERVICE_COMMANDS.has(command) && rest.some((a) => a === '--help' || a === '-h')) {
    process.stdout.write(serviceHelp(command));
    return 0;
  }
  switch (command) {
    // Every service command is imported on demand: an agent's one-shot command must not load the whole service.
    case 'dev':
      return (await import('../roles/dev.ts')).runDev(rest);
    case 'keys':
      return (await import('./keys.ts')).runKeys(rest);
    case 'policy':
      return (await import('./policy.ts')).runPolicy(rest);
    case 'faucet-server':
      return (await import('../roles/faucet.ts')).runFaucet(rest);
    case 'webhooks':
      return (await import('./webhooks.ts')).runWebhooks(rest);
    case 'serve':
      return (await import('../roles/serve.ts')).runServe(rest);
    case 'doctor':
      return (await import('./doctor.ts')).runDoctorCommand(rest);
    case 'paymaster':
      return (await import('./paymaster.ts')).runPaymasterCommand(rest);
    case 'gateway':
      return (await import('../roles/cluster/gateway.ts')).runGateway(rest);
    case 'controller':
      return (await import('../roles/cluster/controller.ts')).runController(rest);
    case 'chain-worker':
      return (await import('../roles/cluster/chainWorker.ts')).runChainWorker(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`unknown command '${command}'\n\n${USAGE}`);
      return 2;
  }
}

const LONG_RUNNING_ROLES = new Set(['gateway', 'controller', 'chain-worker', 'faucet-server']);

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
    // A stopped role has closed what it owns; a library's leftover timer must not keep the pod terminating.
    if (LONG_RUNNING_ROLES.has(process.argv[2] ?? '')) process.exit(code);
  },
  (e: unknown) => {
    if (e instanceof CliError) process.stderr.write(`agent-wallet: ${e.message}\n`);
    else process.stderr.write(`agent-wallet: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exitCode = e instanceof CliError ? 2 : 1;
  },
);
