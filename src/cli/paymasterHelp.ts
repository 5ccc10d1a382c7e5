/**
 * The help of `paymaster`, as plain text: printing it must not load viem or the contracts (main.ts imports the
 * commands on demand). src/cli/paymaster.test.ts checks it names every option the command parses.
 */
export const PAYMASTER_HELP = `  paymaster deploy|fund|stake|status --chain C --rpc-url URL [--json]
  paymaster rotate start|switched|finish --chain C --rpc-url URL [--json]
                          the built-in sponsor's VerifyingPaymaster (eth-infinitism v0.7) on any chain's RPC
                          (docs/operations.md, "Paymaster operations and rotation"). C: ethereum, base, arbitrum
                          or a network name (sepolia, …); the RPC's chain id must be C's
                          --entry-point A       default the canonical v0.7 EntryPoint
    deploy [--signer A]   a new paymaster; its verifyingSigner is A, else AGENT_WALLET_PAYMASTER_SIGNER_KEY's
                          address; its owner the owner key's (each run deploys another)
    fund --paymaster A --amount ETH
                          adds ETH to its deposit in the EntryPoint (what sponsored operations are paid from)
    stake --paymaster A --amount ETH [--unstake-delay S (default 86400)]
                          adds ETH to its stake (outside bundlers throttle an unstaked paymaster)
    status --paymaster A [--state F]
                          code, owner, verifyingSigner, deposit, stake; with --state, the rotation's progress
                          (exit 3 when nothing is deployed there)
    rotate start --paymaster OLD [--signer A] --deposit ETH [--stake ETH] [--unstake-delay S]
                 [--sponsorship-ttl S] [--state F]
                          deploys a paymaster for the new signer (--signer, else AGENT_WALLET_PAYMASTER_SIGNER_KEY's
                          address), funds and stakes it (default: OLD's stake and delay), unlocks OLD's stake, and
                          prints the configuration switch: apply it (paymaster and signer key together). OLD keeps
                          its deposit through the overlap: its operations stay valid for the sponsorship TTL
                          (--sponsorship-ttl, default the chain's shipped bundler.sponsorshipTtlSeconds, 600)
    rotate switched [--switched-at T] [--state F]
                          records that the service signs for the new paymaster since now (or T: ISO time or Unix
                          seconds, when applied earlier): the overlap runs from then
    rotate finish [--to A] [--state F]
                          after the overlap and OLD's unstake delay: withdraws OLD's stake to the owner and its
                          deposit to the new paymaster's (or to A). Refused before (exit 3, with the time)
                          Every phase resumes where a run stopped: --state F (default
                          ./paymaster-rotation-<chain>.json) records them
                          keys from the environment, never flags: AGENT_WALLET_PAYMASTER_OWNER_KEY (sends every
                          transaction; status needs none); AGENT_WALLET_RPC_URL stands in for --rpc-url.
                          exit 0 done, 1 a transaction failed or reverted, 2 usage, 3 refused, 5 the RPC did not answer
`;
