import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { BillingClient, createUsageTracker, type UsageTracker } from '../../src/index.js';
import { redisSpool } from '../../src/redis/index.js';
import type { MockServer } from '../../src/testing/index.js';
import type { RedisCluster } from './cluster.js';

// One failover run on the test cluster: INSTANCES usage trackers, each on its own ioredis Cluster
// client and a redisSpool on one stream, track events as fast as they can. Then the replica of the
// stream's master falls behind (frozen with SIGSTOP, its replication link cut by CLIENT KILL on the
// master: what the master acknowledges meanwhile never reaches it), the master is SIGKILLed, the
// replica thawed: it is promoted without what it missed. The killed node is restarted (it rejoins
// as the new master's replica), tracking goes on, and in the end the mock's records are compared
// with what each `track` answered.

const INSTANCES = 3;
const PARALLEL = 8; // track calls under way at once per instance
const METER = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };
/** How long the master acknowledges writes its replica never gets, before it is killed, in ms. */
const LAG_MS = 300;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(what: string, condition: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(20);
  }
}

/** What one run saw. */
export interface FailoverResult {
  /** Events whose `track` resolved. */
  resolved: number;
  /** Entries still in the stream once the trackers were done sending (0: nothing left to send). */
  leftInStream: number;
  /** Events whose `track` rejected, by error code (or message). */
  rejected: Record<string, number>;
  /** Events whose `track` resolved that the mock never recorded and that are not in the stream either. */
  lost: string[];
  /** Events the mock recorded more than once (by `event_key`). */
  duplicates: string[];
  /** Events whose `track` rejected and that the mock recorded all the same (their outcome was unknown). */
  rejectedButRecorded: number;
  /** `track`s that resolved after the killed node rejoined as a replica. */
  resolvedOnceWhole: number;
  /** `track`s that resolved between the kill and the killed node's restart (none can with `waitReplicas: 1`: no replica). */
  resolvedWhileDegraded: number;
  /** From the kill to the first `track` that resolved after it, in ms. */
  firstResolvedAfterKillMs: number | undefined;
}

/** The pid of a node's process, asked of the node (the harness's list is as created). */
async function pidOf(cluster: RedisCluster, port: number): Promise<number> {
  const info = await cluster.cli(port, 'INFO', 'server');
  return Number(/process_id:(\d+)/.exec(info)?.[1]);
}

/**
 * The replica falls behind (frozen, its link cut: what the master acknowledges meanwhile never
 * reaches it), then its master is SIGKILLed; thawed, the replica is promoted. Resolves with the
 * moment of the kill (`performance.now()`) once the cluster is healthy again.
 */
async function killLagging(cluster: RedisCluster, master: number, replica: number): Promise<number> {
  const replicaPid = await pidOf(cluster, replica);
  process.kill(replicaPid, 'SIGSTOP');
  let killedAt: number;
  try {
    await cluster.cli(master, 'CLIENT', 'KILL', 'TYPE', 'replica');
    await sleep(LAG_MS);
    await cluster.kill(master);
    killedAt = performance.now();
  } finally {
    process.kill(replicaPid, 'SIGCONT');
  }
  await cluster.waitHealthy(30_000);
  return killedAt;
}

/** An ioredis Cluster client, as an application makes one, with its errors swallowed (a node dies here). */
export function ioredisCluster(cluster: RedisCluster): Cluster {
  const client = new Cluster([...cluster.rootNodes], {
    clusterRetryStrategy: () => 100,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    slotsRefreshTimeout: 1_000,
    redisOptions: { connectTimeout: 500 },
  });
  client.on('error', () => {});
  return client;
}

/** One run; `waitReplicas` 0 (the default) or 1. */
export async function failoverRun(
  cluster: RedisCluster,
  mock: MockServer,
  waitReplicas: number,
): Promise<FailoverResult> {
  const run = randomUUID().slice(0, 8);
  const stream = `failover:${run}`;
  const master = await cluster.masterOf(stream);
  const [replica] = await cluster.replicasOf(master);
  if (replica === undefined) throw new Error(`master ${master} has no replica`);
  const billing = new BillingClient({
    apiKey: mock.apiKey,
    baseUrl: mock.baseUrl,
    logLevel: 'off',
    retryDelay: () => 20,
  });
  const clients = Array.from({ length: INSTANCES }, () => ioredisCluster(cluster));
  const trackers: UsageTracker[] = clients.map((client) =>
    createUsageTracker(billing, {
      spool: redisSpool(client, {
        stream,
        waitReplicas,
        waitTimeoutMs: 500,
        timeoutMs: 1_000,
        claimIdleMs: 3_000,
      }),
      onError: () => {}, // failures while the master is down: expected, and retried
    }),
  );
  const resolved: { key: string; at: number }[] = [];
  const rejected: { key: string; why: string }[] = [];
  let stop = false;
  const loop = async (instance: number, tracker: UsageTracker) => {
    for (let n = 0; !stop; ) {
      await Promise.all(
        Array.from({ length: PARALLEL }, async () => {
          const key = `${run}-${instance}-${n++}`;
          try {
            await tracker.track({ ...METER, quantity: 1, event_key: key });
            resolved.push({ key, at: performance.now() });
          } catch (error) {
            const code = (error as { code?: unknown }).code;
            rejected.push({ key, why: typeof code === 'string' ? code : String(error).slice(0, 60) });
          }
        }),
      );
      await sleep(2);
    }
  };
  try {
    await Promise.all(trackers.map((t) => t.flush())); // opens each spool
    const loops = trackers.map((tracker, i) => loop(i, tracker));
    await until('300 events tracked', () => resolved.length >= 300, 20_000);

    const killedAt = await killLagging(cluster, master, replica);
    if ((await cluster.masterOf(stream)) !== replica) throw new Error('the replica was not promoted');

    // The cluster whole again: the killed node back, as the new master's replica, in sync.
    const restartedAt = performance.now();
    await cluster.restart(master);
    await cluster.waitHealthy(30_000);
    await until(
      'the restarted node replicating',
      async () => /master_link_status:up/.test(await cluster.cli(master, 'INFO', 'replication')),
      30_000,
    );
    const wholeAt = performance.now();
    await until(
      '200 events tracked once whole',
      () => resolved.filter((r) => r.at > wholeAt).length >= 200,
      30_000,
    );
    stop = true;
    await Promise.all(loops);

    // Everything that can be sent is: wait until every resolved event is recorded and the stream
    // is empty, or nothing moved for 5 s (what the failover lost never comes).
    let progress = '';
    let movedAt = Date.now();
    let leftInStream = -1;
    await until(
      'the trackers done sending',
      async () => {
        leftInStream = Number(await cluster.cli(replica, 'XLEN', stream));
        const keys = new Set(mock.store.usageEvents.map((e) => e.event_key));
        const missing = resolved.filter((r) => !keys.has(r.key)).length;
        const now = `${missing}/${leftInStream}/${keys.size}`;
        if (now !== progress) [progress, movedAt] = [now, Date.now()];
        return (missing === 0 && leftInStream === 0) || Date.now() - movedAt > 5_000;
      },
      90_000,
    );
    // Keys of what is still in the stream: sent later, so not lost (counted apart).
    const entries = await cluster.cli(replica, 'XRANGE', stream, '-', '+');
    const inStream = new Set([...entries.matchAll(/"event_key":"([^"]+)"/g)].map((m) => m[1]));
    const counts = new Map<string, number>();
    for (const e of mock.store.usageEvents)
      if (e.event_key.startsWith(run)) counts.set(e.event_key, (counts.get(e.event_key) ?? 0) + 1);
    const tally: Record<string, number> = {};
    for (const r of rejected) tally[r.why] = (tally[r.why] ?? 0) + 1;
    const after = resolved.filter((r) => r.at > killedAt);
    return {
      resolved: resolved.length,
      leftInStream,
      rejected: tally,
      lost: resolved.filter((r) => !counts.has(r.key) && !inStream.has(r.key)).map((r) => r.key),
      duplicates: [...counts].filter(([, n]) => n > 1).map(([key]) => key),
      rejectedButRecorded: rejected.filter((r) => counts.has(r.key)).length,
      resolvedOnceWhole: resolved.filter((r) => r.at > wholeAt).length,
      resolvedWhileDegraded: after.filter((r) => r.at < restartedAt).length,
      firstResolvedAfterKillMs: after.length
        ? Math.round(Math.min(...after.map((r) => r.at)) - killedAt)
        : undefined,
    };
  } finally {
    stop = true;
    await Promise.all(trackers.map((t) => t.close({ timeoutMs: 2_000 }).catch(() => {})));
    for (const client of clients) client.disconnect();
  }
}
