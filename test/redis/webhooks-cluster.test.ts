import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { event } from '../webhooks/event.js';
import { uniquePrefix } from './connect.js';
import { buildChild, type Child, spawnChild } from './processes.js';
import { KINDS, useTargets } from './targets.js';

// The receivers of webhooks-processes.test.ts on a Redis Cluster, with node-redis's createCluster
// and with ioredis's Cluster: 3 receiver processes sharing redisDedupeStore (default options but
// the prefix), 40 events each delivered twice at once to two of them, retried until 200: each
// event's onEvent completes exactly once, and every delivery is acknowledged.

const CLUSTER_KINDS = KINDS.filter((kind) => kind.endsWith('-cluster'));
const targets = useTargets(CLUSTER_KINDS);
let bundle: { file: string; remove(): void };
const spawned: Child[] = [];

beforeAll(async () => {
  bundle = await buildChild('./receiver-process.ts');
}, 60_000);
afterAll(async () => {
  await Promise.all(spawned.map((c) => c.kill()));
  bundle?.remove();
});

const post = async (url: string, body: string) =>
  (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status;

/** A sender that retries until 200, every 50 ms; returns every status it got, in order. */
async function deliver(url: string, body: string, ms = 15_000): Promise<number[]> {
  const statuses: number[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const status = await post(url, body);
    statuses.push(status);
    if (status === 200 || Date.now() > deadline) return statuses;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(CLUSTER_KINDS)(
  '3 receiver processes sharing redisDedupeStore on a Redis Cluster, %s',
  (kind) => {
    it('40 events × 2 deliveries at once to two processes: each processed once, all acknowledged', async () => {
      const target = targets(kind);
      const prefix = uniquePrefix(`receivers-${kind}`);
      const receivers = await Promise.all(
        Array.from({ length: 3 }, async () => {
          const c = spawnChild(bundle.file, {
            ...target.env,
            PREFIX: prefix,
            CLAIM_TTL_MS: '1000',
            EVENT_MS: '50',
          });
          spawned.push(c);
          const { port } = await c.next((m) => m.type === 'listening', 20_000);
          return `http://127.0.0.1:${port}/`;
        }),
      );
      const events = Array.from({ length: 40 }, () => event());
      const answers = await Promise.all(
        events.flatMap((e, i) => [
          deliver(receivers[i % 3]!, JSON.stringify(e)),
          deliver(receivers[(i + 1) % 3]!, JSON.stringify(e)),
        ]),
      );
      expect(answers.every((statuses) => statuses.at(-1) === 200)).toBe(true);
      // Before its 200, a delivery can only have been told the event is being processed elsewhere.
      expect(answers.flat().every((status) => status === 200 || status === 409)).toBe(true);
      const completions = (await target.command(['LRANGE', `${prefix}completions`, '0', '-1'])) as string[];
      const counts = new Map<string, number>();
      for (const id of completions) counts.set(id, (counts.get(id) ?? 0) + 1);
      for (const e of events) expect(counts.get(e.transaction_id)).toBe(1);
      expect(completions).toHaveLength(events.length);
    }, 60_000);
  },
);
