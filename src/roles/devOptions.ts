/**
 * The options of `agent-wallet dev` (what `npm start` runs), in one place: the role parses them from here and
 * `dev --help` prints them from here, so the help cannot miss one.
 */
export interface DevOption {
  type: 'string' | 'boolean';
  /** The value's placeholder in the help, e.g. `N`. */
  arg?: string;
  /** What it does, its default and the environment variable that also sets it. */
  help: string;
}

export const DEV_OPTIONS = {
  port: { type: 'string', arg: 'N', help: 'the HTTP API port (AGENT_WALLET_PORT, default 8080; 0 picks a free one)' },
  host: { type: 'string', arg: 'H', help: 'the address the API and the faucet listen on (AGENT_WALLET_HOST, default 127.0.0.1)' },
  'faucet-port': { type: 'string', arg: 'N', help: 'the aUSD faucet port (AGENT_WALLET_FAUCET_PORT, default 8090; 0 picks a free one)' },
  'data-dir': { type: 'string', arg: 'D', help: 'where the store, the devnet and the secrets live (AGENT_WALLET_DATA_DIR, default ./.data)' },
  'allow-loopback-webhooks': {
    type: 'boolean',
    help:
      'development only: deliver webhooks to a receiver on this machine (127.0.0.1,\n' +
      'localhost), plain http:// too (AGENT_WALLET_WEBHOOKS_ALLOW_LOOPBACK=1); docs/webhooks.md',
  },
  'gmx-keeper-delay-ms': {
    type: 'string',
    arg: 'MS',
    help: "how long the devnet's GMX v2 keeper waits before executing an order\n(AGENT_WALLET_GMX_KEEPER_DELAY_MS, default 1000)",
  },
  quiet: { type: 'boolean', help: 'log warnings only' },
} as const satisfies Record<string, DevOption>;

/** The options as node:util parseArgs takes them. */
export const devParseOptions = Object.fromEntries(Object.entries(DEV_OPTIONS).map(([name, o]) => [name, { type: o.type }])) as {
  [K in keyof typeof DEV_OPTIONS]: { type: (typeof DEV_OPTIONS)[K]['type'] };
};

/** The option lines of the help, indented by `indent`. */
export function devOptionsHelp(indent: string): string {
  const flag = ([name, o]: [string, DevOption]) => `--${name}${o.arg ? ` ${o.arg}` : ''}`;
  const entries = Object.entries(DEV_OPTIONS) as [string, DevOption][];
  const width = Math.max(...entries.map((e) => flag(e).length)) + 2;
  return entries
    .map((e) => `${indent}${flag(e).padEnd(width)}${e[1].help.split('\n').join(`\n${indent}${' '.repeat(width)}`)}`)
    .join('\n');
}

/**
 * The webhook settings `dev` starts the service with: receivers on this machine only when asked, by the flag or
 * the environment (the docs test starts a page's service through this too, as `npm start -- <flags>` would).
 */
export function devWebhookSettings(values: { 'allow-loopback-webhooks'?: boolean | undefined }, env: NodeJS.ProcessEnv = process.env): { allowLoopback: boolean } {
  return { allowLoopback: values['allow-loopback-webhooks'] === true || env.AGENT_WALLET_WEBHOOKS_ALLOW_LOOPBACK === '1' };
}
