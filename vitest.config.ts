import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // One devnet (three anvil chains) for the whole run; files find it via AGENT_WALLET_TEST_MANIFEST.
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Test files share the devnet's chains and executor keys, and the machine has two cores: one file at a time.
    fileParallelism: false,
  },
});
