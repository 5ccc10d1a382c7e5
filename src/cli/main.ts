import { runDev } from '../roles/dev.ts';
import { runKeys } from './keys.ts';
import { CliError } from './args.ts';

const USAGE = `agent-wallet <command> [options]

Commands:
  dev                     run every role in one process: devnet, store, controller, chain workers, gateway
                          --port N (AGENT_WALLET_PORT, default 8080)  --host H (AGENT_WALLET_HOST, default 127.0.0.1)
                          --data-dir D (AGENT_WALLET_DATA_DIR, default ./.data)
  keys create --mode sponsored|auto|manual [--name N] [--json]
  keys list [--json]
  keys revoke <id> [--json]
  keys rotate <id> [--json]
                          operator key management; takes the same --data-dir as the service and works
                          while it runs (through the service's admin socket)
  help                    this text
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'dev':
      return runDev(rest);
    case 'keys':
      return runKeys(rest);
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

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof CliError) process.stderr.write(`agent-wallet: ${e.message}\n`);
    else process.stderr.write(`agent-wallet: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exitCode = e instanceof CliError ? 2 : 1;
  },
);
