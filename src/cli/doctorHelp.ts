/**
 * The help of `doctor` and of the network options `serve` shares, as plain text: printing it must not load the
 * checks or the network files (main.ts imports the commands on demand). What it names is
 * checked by src/cli/doctor.test.ts: each option the commands parse is named here.
 */
export const NETWORK_OPTIONS_HELP = `--network N           a shipped testnet (networks/): sepolia, base-sepolia or
                      arbitrum-sepolia; repeat it for several
--rpc-url [N=]URL     its RPC endpoint (N= the network or chain name; bare: every network)
--paymaster [N=]A     your VerifyingPaymaster: deployed, with a deposit, its
                      verifyingSigner the signer key's address
--beneficiary [N=]A   receives the bundles' gas refunds (default: the first executor)
--treasury [N=]A      receives payments
--bundler-url [N=]URL an outside ERC-4337 bundler (a hosted one, Alto) bundles instead of
                      the built-in one: no executor keys then
--sponsor-url [N=]URL an ERC-7677 paymaster service sponsors instead of the built-in signer
                      (--paymaster: the paymaster it signs for): no signer key then
keys from the environment, as a cluster's chain worker takes them:
AGENT_WALLET_PAYMASTER_SIGNER_KEY, AGENT_WALLET_EXECUTOR_KEYS (comma-separated, built-in bundler),
AGENT_WALLET_X402_SETTLER_KEY and AGENT_WALLET_FAUCET_KEY (optional)`;

const indent = (text: string, by: string) => text.split('\n').map((l) => `${by}${l}`).join('\n');

export const DOCTOR_HELP = `  doctor [--json] [--chain C]… [--timeout-ms N]
                          checks a configuration against its chains before it serves: chain id, RPC methods,
                          EntryPoint, factory, paymaster (signer, deposit, stake), account balances, an outside
                          bundler, tokens, protocol addresses (docs/operations.md, "Pre-flight: agent-wallet
                          doctor"). Prints each check with what to do; exit 1 when one fails. The configuration:
                          --config F    a cluster's config file; keys, when set, from the chain worker's variables
                                        below, and AGENT_WALLET_RPC_URL for a chain without rpcUrl
${indent(NETWORK_OPTIONS_HELP, '                          ')}
                          --data-dir D  the devnet of a \`dev\` run; with none of these, the running \`dev\` service's
`;

export const SERVE_HELP = `  serve --network N … [--port N] [--host H] [--data-dir D] [--skip-doctor] [--quiet]
                          every role in one process, as \`dev\`, on shipped testnets through your RPC URLs, contracts
                          and keys (docs/operations.md, "Running against a testnet"); no faucet, no development key
                          (\`keys create\`). Runs the doctor's checks first and does not start when one fails
${indent(NETWORK_OPTIONS_HELP, '                          ')}
                          AGENT_WALLET_SERVICE_SECRET (>= 32 characters), or a new one kept in <data-dir>/service-secret
`;
