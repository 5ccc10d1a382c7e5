import { defineConfig } from 'vitest/config';

/** The end-to-end scenarios that run twice: in one process (embedded) and as the cluster layout. */
const SHARED_SCENARIOS = ['test/e2e/execute.test.ts', 'test/e2e/ordering.test.ts', 'test/e2e/onchainRevert.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Test files share the devnet's chains and executor keys, and the machine has two cores: one file at a time.
    fileParallelism: false,
    projects: [
      {
        extends: true,
        test: {
          name: 'embedded',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['test/cluster/**'],
          // One devnet (three anvil chains) for the whole run; files find it via AGENT_WALLET_TEST_MANIFEST.
          globalSetup: ['test/globalSetup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: [...SHARED_SCENARIOS, 'test/cluster/**/*.test.ts'],
          // The devnet, then a real kube-apiserver (built from its Go modules) and Redis; see test/support/cluster.ts.
          globalSetup: ['test/globalSetup.ts', 'test/cluster/globalSetup.ts'],
        },
      },
    ],
  },
});
