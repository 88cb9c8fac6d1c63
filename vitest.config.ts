import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The Node builds ship classic zod in place of zod/mini (tsup.config.ts); tests run what they ship.
  // The zod/mini browser build is exercised by the Chromium test, which loads dist/browser.
  resolve: { alias: { 'zod/mini': 'zod' } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Integration tests each start their own mock server on an ephemeral loopback port,
    // so files can run in parallel; 2 cores on CI.
    pool: 'forks',
  },
});
