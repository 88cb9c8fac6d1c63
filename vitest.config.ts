import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Integration tests each start their own mock server on an ephemeral loopback port,
    // so files can run in parallel; 2 cores on CI.
    pool: 'forks',
  },
});
