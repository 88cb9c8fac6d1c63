import { existsSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';
import { PG_BIN } from './scripts/servers.mjs';

/**
 * The multi-instance tests start Debian's redis-server. Without it they are left out with the
 * reason printed, as the browser test does without Chromium; under CI=true (.ci/run installs it)
 * they always run, so a missing server fails there instead of passing unseen.
 */
const redisServer = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
// Every test under test/redis/ starts a redis-server (or tests the entry beside those that do).
const REDIS_FILES = ['test/redis/**'];
const skipRedis = !existsSync(redisServer) && !process.env.CI;
if (skipRedis) {
  console.warn(
    `redis tests skipped: no redis-server at ${redisServer} (apt-get install -y redis-server, or set REDIS_SERVER); CI runs them`,
  );
}

/**
 * The `billing-sdk/postgres` tests start a PostgreSQL cluster of their own with Debian's binaries
 * (test/postgres/cluster-server.mjs, whose PG_BIN says where: `PG_BIN` from the env, else PostgreSQL
 * 15's, else the newest installed); left out the same way without them, never under CI=true.
 */
const pgBin = PG_BIN;
const POSTGRES_FILES = ['test/postgres/**'];
const skipPostgres = !existsSync(`${pgBin}/initdb`) && !process.env.CI;
if (skipPostgres) {
  console.warn(
    `postgres tests skipped: no initdb in ${pgBin} (apt-get install -y postgresql, or set PG_BIN); CI runs them`,
  );
}

export default defineConfig({
  // The Node builds ship classic zod in place of zod/mini (tsup.config.ts); tests run what they ship.
  // The zod/mini browser build is exercised by the Chromium test, which loads dist/browser.
  resolve: { alias: { 'zod/mini': 'zod' } },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [
      ...configDefaults.exclude,
      ...(skipRedis ? REDIS_FILES : []),
      ...(skipPostgres ? POSTGRES_FILES : []),
    ],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Integration tests each start their own mock server on an ephemeral loopback port,
    // so files can run in parallel; 2 cores on CI.
    pool: 'forks',
  },
});
