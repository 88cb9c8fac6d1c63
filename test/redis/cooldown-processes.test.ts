import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { uniquePrefix } from './connect.js';
import { buildChild, spawnChild } from './processes.js';
import { KINDS, type Target, useTargets } from './targets.js';

// 4 processes, each a BillingClient making 3 concurrent calls, against a mock that answers 429 with
// Retry-After: 1 for STORM_MS. Counted: requests that reach the mock during the storm, with one
// cooldown shared through Redis vs one per process.
//
// The bound on the shared figure holds whatever the scheduling: each process's first calls go before
// any 429 is known (at most 12), and after that only a probe can go, at most one per window, since a
// refused probe opens the next one-second window in Redis: at most floor(STORM_MS / 1000) + 1 more.
// With a cooldown per process, each process probes once per window on its own.
//
// The shared cooldown runs on one redis-server (node-redis) and on a Redis Cluster (node-redis's
// createCluster, ioredis's Cluster): the same bound holds on each.

const PROCESSES = 4;
const LOOPS = 3;
const STORM_MS = 3_500;
const WINDOWS = Math.floor(STORM_MS / 1_000);
const targets = useTargets();
let child: { file: string; remove(): void };
let mock: MockServer;

beforeAll(async () => {
  child = await buildChild('./cooldown-process.ts');
  mock = await startMockServer();
});
afterAll(async () => {
  child?.remove();
  await mock?.close();
});

/** Runs the storm with every process in `mode`; returns how many requests reached the mock during it. */
async function storm(mode: 'redis' | 'memory', target: Target): Promise<number> {
  mock.reset();
  const prefix = uniquePrefix(`cooldown-${mode}`);
  const children = Array.from({ length: PROCESSES }, () =>
    spawnChild(child.file, {
      MODE: mode,
      ...target.env,
      PREFIX: prefix,
      BASE_URL: mock.baseUrl,
      API_KEY: mock.apiKey,
      LOOPS: String(LOOPS),
    }),
  );
  try {
    await Promise.all(children.map((c) => c.next((m) => m.type === 'ready')));
    mock.requests.clear();
    mock.faults.add({ path: '/api/usage/', status: 429, headers: { 'retry-after': '1' }, times: Infinity });
    for (const c of children) c.send('go');
    await new Promise((resolve) => setTimeout(resolve, STORM_MS));
    const during = mock.requests.count({ path: '/api/usage/' });
    mock.faults.clear();
    const finished = await Promise.all(children.map((c) => c.next((m) => m.type === 'finished', 15_000)));
    // Every call got through once the storm ended, and Redis never failed (so nothing went unlimited).
    for (const f of finished) expect(f).toMatchObject({ ok: LOOPS, errors: [], redisErrors: [] });
    return during;
  } finally {
    await Promise.all(children.map((c) => c.kill()));
  }
}

describe(`${PROCESSES} processes in a 429 storm of ${STORM_MS} ms (Retry-After: 1)`, () => {
  it('with redisCooldown the fleet sends one probe per window; with a cooldown per process, one per process per window', async () => {
    const burst = PROCESSES * LOOPS;
    const shared = await storm('redis', targets('node-redis'));
    const perProcess = await storm('memory', targets('node-redis'));
    const seen = `during the storm: shared ${shared}, per process ${perProcess} (${burst} first calls; ${WINDOWS} windows)`;
    expect(shared, seen).toBeLessThanOrEqual(burst + WINDOWS + 1);
    // Each process probes at about 1 s and 2 s, even on a loaded machine; 3 s is left as margin.
    expect(perProcess, seen).toBeGreaterThanOrEqual(burst + PROCESSES * 2);
  }, 30_000);

  it.each(KINDS.filter((kind) => kind.endsWith('-cluster')))(
    'on a Redis Cluster with %s: the fleet still sends one probe per window',
    async (kind) => {
      const burst = PROCESSES * LOOPS;
      const shared = await storm('redis', targets(kind));
      expect(shared).toBeLessThanOrEqual(burst + WINDOWS + 1);
      // The storm was met, and probes went on through it: a first call, then about one per window
      // (first calls may be fewer than on one node: a process whose first call comes after another's
      // 429 already waits).
      expect(shared).toBeGreaterThanOrEqual(WINDOWS);
    },
    30_000,
  );
});
