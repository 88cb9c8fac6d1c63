import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { uniquePrefix } from './connect.js';
import {
  type Child,
  expectClosedClean,
  type Message,
  slowEventPosts,
  useFleet,
  waitUntil,
} from './processes.js';
import { KINDS, type Target, useTargets } from './targets.js';

// Three instances of a service, each with createUsageTracker on one redisSpool stream, track a few
// thousand events against the mock; one is SIGKILLed midway with entries pending in the group. The
// two others claim those entries once idle and send them with their original keys. In the end the
// mock holds every tracked event exactly once, under the key `track` returned, and the total is
// exact; also with 10% of the mock's answers dropped after it recorded the event. On one
// redis-server (node-redis), and on a Redis Cluster with node-redis's createCluster and ioredis's Cluster.

const CHILDREN = 3;
const COUNT = 900; // events per child
const PARALLEL = 16; // track calls under way at once in a child
const CLAIM_IDLE_MS = 1_000;
const METER = ['acct_active', 'api-gateway', 'api_calls'] as const;

const targets = useTargets();
const fleet = useFleet('./tracker-process.ts', 60_000);

/** Entries pending in the group under `consumer`: id and how many times each was delivered. */
async function pendingOf(target: Target, stream: string, consumer: string): Promise<string[]> {
  const reply = (await target.command(['XPENDING', stream, 'billing-sdk', '-', '+', '100000', consumer])) as [
    string,
    string,
    number,
    number,
  ][];
  return reply.map(([id]) => id);
}

interface Tracked {
  child: number;
  n: number;
  key: string;
  quantity: number;
}

const tracked = (c: Child, child: number): Tracked[] =>
  c.messages
    .filter((m): m is Message & { n: number; key: string; quantity: number } => m.type === 'tracked')
    .map((m) => ({ child, n: m.n, key: m.key, quantity: m.quantity }));

async function scenario(label: string, target: Target): Promise<void> {
  const run = randomUUID().slice(0, 8);
  const stream = uniquePrefix(`tracker-${label}`);
  const consumers = Array.from({ length: CHILDREN }, (_, i) => `instance-${i}-${run}`);
  const before = new Set(fleet.mock.store.usageEvents.map((e) => e.event_key));
  const totalBefore = fleet.mock.store.usageTotal(...METER);

  const children = consumers.map((consumer, i) =>
    fleet.spawn({
      ...target.env,
      STREAM: stream,
      CONSUMER: consumer,
      CLAIM_IDLE_MS: String(CLAIM_IDLE_MS),
      CHILD: String(i),
      COUNT: String(COUNT),
      PARALLEL: String(PARALLEL),
      RUN: run,
    }),
  );
  try {
    await Promise.all(children.map((c) => c.next((m) => m.type === 'ready', 20_000)));
    for (const c of children) c.send('go');

    // Child 0 dies (SIGKILL) midway, while entries are pending under its name: taken, not acknowledged.
    const [doomed, ...survivors] = children as [Child, ...Child[]];
    let atKill: string[] = [];
    await waitUntil(
      'child 0 midway, with entries pending',
      async () => {
        if (tracked(doomed, 0).length < COUNT * 0.3) return false;
        atKill = await pendingOf(target, stream, consumers[0] as string);
        return atKill.length > 0;
      },
      () => ({ tracked: tracked(doomed, 0).length, pending: atKill.length, last: doomed.messages.at(-1) }),
    );
    await doomed.kill('SIGKILL');
    const left = await pendingOf(target, stream, consumers[0] as string);
    expect(left.length).toBeGreaterThan(0); // the dead instance left entries behind
    // Their keys, read while they are in the stream: they must be recorded all the same.
    const orphanKeys = await Promise.all(
      left.map(async (id) => {
        const [[, fields]] = (await target.command(['XRANGE', stream, id, id])) as [[string, string[]]];
        return (JSON.parse(fields[1] as string) as { event_key: string }).event_key;
      }),
    );
    const doomedTracked = tracked(doomed, 0);
    expect(doomedTracked.length).toBeLessThan(COUNT); // it really died midway

    await Promise.all(survivors.map((c) => c.next((m) => m.type === 'tracked-all', 30_000)));
    // The survivors send everything, the dead instance's pending entries included (claimed once idle).
    await waitUntil(
      'the stream drained',
      async () => Number(await target.command(['XLEN', stream])) === 0,
      () => children.map((c) => c.messages.at(-1)),
      60_000,
    );
    expect(await pendingOf(target, stream, consumers[0] as string)).toEqual([]);
    await expectClosedClean(survivors, children);

    // What the mock recorded in this scenario, per event (child, n), whatever its key.
    const recorded = fleet.mock.store.usageEvents.filter((e) => !before.has(e.event_key));
    const byEvent = new Map<string, typeof recorded>();
    for (const e of recorded) {
      const { child, n } = e.metadata as { child: number; n: number };
      const id = `${child}:${n}`;
      byEvent.set(id, [...(byEvent.get(id) ?? []), e]);
    }
    const duplicates = [...byEvent.entries()].filter(([, events]) => events.length > 1);
    expect(duplicates).toEqual([]);

    const all = [doomedTracked, ...survivors.map((c, i) => tracked(c, i + 1))].flat();
    expect(all.length).toBe(doomedTracked.length + (CHILDREN - 1) * COUNT);
    expect(new Set(all.map((t) => t.key)).size).toBe(all.length); // keys are distinct
    const keyOf = new Map(recorded.map((e) => [e.event_key, e]));
    // Every tracked event is recorded, under the key track returned, with its quantity.
    const missing = all.filter((t) => keyOf.get(t.key)?.quantity !== t.quantity);
    expect(missing).toEqual([]);
    for (const key of orphanKeys) expect(keyOf.has(key)).toBe(true);
    // Beyond them, only events the dead instance was tracking when it died (their track never
    // resolved, so the caller never learnt their fate): a handful at most, each once.
    const known = new Set(all.map((t) => t.key));
    const inDoubt = recorded.filter((e) => !known.has(e.event_key));
    const doomedNs = new Set(doomedTracked.map((t) => t.n));
    for (const e of inDoubt) {
      const { child, n } = e.metadata as { child: number; n: number };
      expect(child).toBe(0);
      expect(doomedNs.has(n)).toBe(false);
    }
    expect(inDoubt.length).toBeLessThanOrEqual(PARALLEL);
    const sum = (values: { quantity: number }[]) => values.reduce((total, v) => total + v.quantity, 0);
    expect(fleet.mock.store.usageTotal(...METER) - totalBefore).toBe(sum(all) + sum(inDoubt));
    expect(recorded.length).toBe(all.length + inDoubt.length);
  } finally {
    // A failed scenario leaves no process running into the next one.
    await Promise.all(children.map((c) => c.kill()));
  }
}

describe('3 processes tracking usage through one redisSpool stream, one SIGKILLed midway', () => {
  it('every tracked event is recorded exactly once, the total is exact', async () => {
    // Each request takes 20 ms, so sends lag behind tracking and entries wait in the group.
    slowEventPosts(fleet.mock);
    await scenario('plain', targets('node-redis'));
  }, 120_000);

  it('the same with 10% of the answers dropped after the mock recorded the event', async () => {
    slowEventPosts(fleet.mock, true);
    await scenario('dropped answers', targets('node-redis'));
  }, 120_000);

  it.each(KINDS.filter((kind) => kind.endsWith('-cluster')))(
    'on a Redis Cluster with %s: every tracked event is recorded exactly once, the total is exact',
    async (kind) => {
      slowEventPosts(fleet.mock);
      await scenario(`cluster, ${kind}`, targets(kind));
    },
    120_000,
  );
});
