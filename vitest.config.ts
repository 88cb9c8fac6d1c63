import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { PG_BIN } from './scripts/servers.mjs';

/**
 * The multi-instance tests start Debian's redis-server. Without it they are left out with the
 * reason printed, as the browser test does without Chromium; under CI=true (.ci/run installs it)
 * they always run, so a missing server fails there instead of passing unseen.
 */
const redisServer = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
// Every test under test/redis/ starts a redis-server (or tests the entry beside those that do); so
// do the CLI's process tests, which run the relay, dead letters and doctor on every durable spool,
// and the AI meter's processes sharing a Redis hold store.
const CLI_SPOOL_FILES = ['test/cli/{relay,dead-letters,doctor,cluster}.test.ts'];
const REDIS_FILES = ['test/redis/**', 'test/ai/holds.drill.test.ts', ...CLI_SPOOL_FILES];
const skipRedis = !existsSync(redisServer) && !process.env.CI;
if (skipRedis) {
  console.warn(
    `redis tests skipped: no redis-server at ${redisServer} (apt-get install -y redis-server, or set REDIS_SERVER); CI runs them`,
  );
}

/**
 * The `billing-sdk/postgres` tests start a PostgreSQL cluster of their own with Debian's binaries
 * (scripts/servers.mjs, whose PG_BIN says where: `PG_BIN` from the env, else PostgreSQL
 * 15's, else the newest installed); left out the same way without them, never under CI=true.
 */
const pgBin = PG_BIN;
const POSTGRES_FILES = ['test/postgres/**', ...CLI_SPOOL_FILES];
const skipPostgres = !existsSync(`${pgBin}/initdb`) && !process.env.CI;
if (skipPostgres) {
  console.warn(
    `postgres tests skipped: no initdb in ${pgBin} (apt-get install -y postgresql, or set PG_BIN); CI runs them`,
  );
}

/**
 * The long drills: a Redis master killed and its replica promoted (minutes of Redis), the test
 * cluster's self-test (cluster creation, a master killed and rejoining), SIGKILL chaos (a tracker or
 * relay fleet with one process killed midway under load, the file spool's tracker killed three
 * times) and the soaks (a thousand writes through every fault). `npm test` leaves them out;
 * `npm run test:drills` runs them, one file at a time, and CI runs both. A file of ours named
 * `*.drill.test.ts` is one; the others are listed by path until their owners rename them.
 */
const DRILLS = [
  'test/**/*.drill.test.ts',
  'test/redis/failover.test.ts',
  'test/redis/cluster.test.ts',
  'test/redis/tracker-processes.test.ts',
  'test/postgres/relay-processes.test.ts',
  'test/tracker/chaos-file.test.ts',
  // The CLI's bin run against every spool for its fault cases (URL secrets, a spool that is not
  // there, relay --once ending): about 60 s of child processes, run once by the drills.
  'test/cli/secrets.test.ts',
  'test/cli/no-spool.test.ts',
  'test/cli/relay-once-ends.test.ts',
];

/**
 * The process tests: several processes of ours at once (the CLI's bin run against every durable
 * spool; two or three app processes sharing a Redis or a PostgreSQL; the mock's own bin), or a
 * Redis Cluster of six servers of their own (every operation with default options, the spool
 * contract, the access store and webhooks on it). Each proves a claim about processes (single-flight,
 * exactly once, one cooldown, one webhook run) that no in-process test can, and together they were
 * a third of `npm test`'s CPU time (about 200 s of 700 on 2 cores), which kept it over its
 * 5-minute budget. `npm run test:drills` runs them first, 4 files at a time like `npm test`
 * (they need no machine to themselves), then the drills; CI runs both.
 */
const PROCESSES = [
  'test/cli/{relay,dead-letters,doctor,cluster}.test.ts',
  'test/redis/*-processes.test.ts',
  'test/postgres/*-processes.test.ts',
  'test/redis/{access,webhooks,spool}-cluster.test.ts',
  'test/redis/cluster-keys.test.ts',
  'test/mock/bin.test.ts',
  'test/node/proxy.test.ts',
];

/**
 * The files that replace modules or globals (`vi.mock`, `vi.stubGlobal`, `vi.stubEnv`, fake timers
 * around module state): they run isolated, each in a fresh module graph. Every other file of `npm
 * test` shares its worker's modules with the files before it (`isolate: false`): importing the
 * sources and their dependencies again for each of 160 files was about a third of the suite's CPU.
 */
const ISOLATED = [
  'test/mock/encoding.test.ts',
  'test/access/warm.test.ts',
  'test/view/view.test.ts',
  'test/core/options.test.ts',
  'test/core/non-object-options.test.ts',
  'test/core/logger.test.ts',
];

const skipped = [
  ...configDefaults.exclude,
  ...(skipRedis ? REDIS_FILES : []),
  ...(skipPostgres ? POSTGRES_FILES : []),
];

export default defineConfig({
  // The Node builds ship classic zod in place of zod/mini (tsup.config.ts); tests run what they ship.
  // The zod/mini browser build is exercised by the Chromium test, which loads dist/browser.
  resolve: { alias: { 'zod/mini': 'zod' } },
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Integration tests each start their own mock server (and redis-server, cluster, PostgreSQL) on
    // ephemeral loopback ports, so files can run in parallel. Most of a file's time is waiting (on
    // sockets, child processes, servers starting), so more files than cores run at once: on 2 cores
    // vitest's default is 1 file at a time; 4 took test/core from 52 s to 33 s and test/redis from
    // about 300 s of files to 104 s. VITEST_MAX_WORKERS overrides it.
    pool: 'forks',
    maxWorkers: Math.max(4, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: [...skipped, ...DRILLS, ...PROCESSES, ...ISOLATED],
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'isolated', include: ISOLATED, exclude: skipped },
      },
      {
        extends: true,
        test: { name: 'processes', include: PROCESSES, exclude: [...skipped, ...DRILLS] },
      },
      {
        extends: true,
        // One at a time: a drill's timings (a failover, lease expiries, kills at random moments)
        // assume it has the machine to itself.
        test: { name: 'drills', include: DRILLS, exclude: skipped, maxWorkers: 1 },
      },
    ],
  },
});
