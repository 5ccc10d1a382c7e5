import { findRunningServices } from '../admin/running.ts';
import { CliError, resolveDataDir } from '../lib/args.ts';

/**
 * The data directory whose store an operator command (`keys`, `policy`) manages: --data-dir or
 * AGENT_WALLET_DATA_DIR when given; else the one running `dev` service's (src/admin/running.ts), wherever this is
 * run from. Never a default `./.data` of its own: a key or policy written to a store no service reads does nothing,
 * which is worse than a refusal. `what` names the things managed in messages (`keys`, `policies`).
 */
export async function serviceDataDir(flag: string | undefined, what: string): Promise<string> {
  if (flag !== undefined || process.env.AGENT_WALLET_DATA_DIR) return resolveDataDir(flag);
  const running = await findRunningServices();
  if (running.length === 1) {
    process.stderr.write(`${what} of the running service (pid ${running[0]!.pid}), data directory ${running[0]!.dataDir}\n`);
    return running[0]!.dataDir;
  }
  if (running.length > 1) {
    throw new CliError(
      `${running.length} agent-wallet services are running; pass --data-dir with the data directory of the one to manage:\n` +
        running.map((s) => `  --data-dir ${s.dataDir}   (pid ${s.pid}${s.url ? `, ${s.url}` : ''})`).join('\n'),
    );
  }
  throw new CliError(
    'no running agent-wallet service found: pass --data-dir D (or set AGENT_WALLET_DATA_DIR), the data directory of the ' +
      `service whose ${what} to manage (\`npm start\` uses ./.data of the directory it runs in); --kube for a cluster`,
  );
}
