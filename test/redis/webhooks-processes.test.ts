import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../src/index.js';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { event } from '../webhooks/event.js';
import { connectRedis, type NodeRedis, uniquePrefix } from './connect.js';
import { buildChild, type Child, spawnChild } from './processes.js';
import { useRedisServer } from './redis-server.js';

// Several receiver processes behind one URL, sharing redisDedupeStore: each event's onEvent
// completes exactly once, and every delivery is acknowledged in the end.

const CLAIM_TTL_MS = 1_000;
const redis = useRedisServer();
const prefix = uniquePrefix('receivers');
let client: NodeRedis;
let child: { file: string; remove(): void };
let receivers: { child: Child; url: string }[] = [];
const extra: Child[] = [];

async function startReceiver(): Promise<{ child: Child; url: string }> {
  const c = spawnChild(child.file, {
    REDIS_URL: redis.server.url,
    PREFIX: prefix,
    CLAIM_TTL_MS: String(CLAIM_TTL_MS),
    EVENT_MS: '100',
  });
  const { port } = await c.next((m) => m.type === 'listening');
  return { child: c, url: `http://127.0.0.1:${port}/` };
}

beforeAll(async () => {
  client = await connectRedis(redis.server.url);
  child = await buildChild('./receiver-process.ts');
  receivers = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
});
afterAll(async () => {
  await Promise.all([...receivers.map((r) => r.child.kill()), ...extra.map((c) => c.kill())]);
  child?.remove();
  await client?.close();
});

/** How many times onEvent completed for each id, across every process. */
async function completions(): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const id of await client.lRange(`${prefix}completions`, 0, -1))
    counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

const post = async (url: string, body: string) => {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
};

/** A sender that retries until 200, every 50 ms; returns every status it got, in order. */
async function deliver(url: string, body: string, ms = 10_000): Promise<number[]> {
  const statuses: number[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const { status } = await post(url, body);
    statuses.push(status);
    if (status === 200 || Date.now() > deadline) return statuses;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const urls = () => receivers.map((r) => r.url);

describe('3 receiver processes sharing redisDedupeStore', () => {
  it('one delivery posted to each process in turn: processed once, acknowledged by all three', async () => {
    const e = event();
    const body = JSON.stringify(e);
    for (const url of urls())
      expect(await post(url, body)).toMatchObject({ status: 200, body: { received: true } });
    expect((await completions()).get(e.transaction_id)).toBe(1);
  });

  it('the same delivery at all three at once, for 20 events: each processed once, all acknowledged', async () => {
    const events = Array.from({ length: 20 }, () => event());
    const answers = await Promise.all(
      events.flatMap((e) => urls().map((url) => deliver(url, JSON.stringify(e)))),
    );
    expect(answers.every((statuses) => statuses.at(-1) === 200)).toBe(true);
    // Before its 200, a delivery can only have been told the event is being processed elsewhere.
    expect(answers.flat().every((status) => status === 200 || status === 409)).toBe(true);
    const counts = await completions();
    for (const e of events) expect(counts.get(e.transaction_id)).toBe(1);
  });

  it('an onEvent longer than the claim TTL keeps its claim (renewed): the others answer 409 until it is done', async () => {
    const e = event({ account_ref_id: `slow-${CLAIM_TTL_MS * 2.5}` });
    const body = JSON.stringify(e);
    const [a, b, c] = urls() as [string, string, string];
    const first = post(a, body);
    await receivers[0]!.child.next((m) => m.type === 'start' && m.id === e.transaction_id);
    const started = Date.now();
    const meanwhile: number[] = [];
    while (Date.now() - started < CLAIM_TTL_MS * 2) {
      meanwhile.push((await post(b, body)).status, (await post(c, body)).status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(meanwhile.every((status) => status === 409)).toBe(true);
    expect((await first).status).toBe(200);
    expect((await post(b, body)).status).toBe(200);
    expect((await completions()).get(e.transaction_id)).toBe(1);
  });

  it('a process killed (SIGKILL) in the middle of onEvent: after the claim TTL another process processes it, once', async () => {
    const doomed = await startReceiver();
    extra.push(doomed.child);
    const e = event({ account_ref_id: 'hang' });
    const body = JSON.stringify(e);
    const lost = post(doomed.url, body).catch((error: unknown) => error);
    await doomed.child.next((m) => m.type === 'start' && m.id === e.transaction_id);
    await doomed.child.kill('SIGKILL');
    expect(await lost).toBeInstanceOf(Error); // the sender saw the connection drop: it retries
    // The retry carries an account_ref_id the survivors process normally: same id, other body field.
    const retry = JSON.stringify({ ...e, account_ref_id: 'acct_1' } satisfies WebhookEvent);
    const statuses = await deliver(urls()[1]!, retry);
    expect(statuses.at(-1)).toBe(200);
    expect(statuses.slice(0, -1).every((status) => status === 409)).toBe(true);
    expect((await completions()).get(e.transaction_id)).toBe(1);
  });
});

describe('the mock’s lifecycle webhooks, retried, through a round-robin balancer to the 3 processes', () => {
  let mock: MockServer;
  let balancer: Server;
  beforeAll(async () => {
    mock = await startMockServer({ webhookRetry: { attempts: 10, delayMs: 25 } });
    let next = 0;
    // Each try of a delivery goes to the next process: a retry always lands somewhere else.
    balancer = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const target = urls()[next++ % receivers.length]!;
      try {
        const answer = await fetch(target, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: Buffer.concat(chunks),
        });
        res.writeHead(answer.status, Object.fromEntries(answer.headers));
        res.end(Buffer.from(await answer.arrayBuffer()));
      } catch {
        res.writeHead(502).end();
      }
    });
    await new Promise<void>((resolve) => balancer.listen(0, '127.0.0.1', resolve));
    const address = balancer.address();
    mock.webhooks.register(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`);
  });
  afterAll(async () => {
    await mock?.close();
    balancer?.closeAllConnections();
    await new Promise((resolve) => balancer?.close(resolve));
  });

  it('30 lifecycle events (some failing once, some slow) then every one redelivered twice at once: each processed exactly once', async () => {
    const kinds = ['plain', 'flaky', 'slow-150'];
    const deliveries = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        mock.lifecycle.subscribe({ account_ref_id: `acct-${randomUUID()}-${kinds[i % kinds.length]}` }),
      ),
    );
    expect(deliveries.every((d) => d.delivered)).toBe(true);
    for (const d of deliveries.filter((d) => d.event.account_ref_id.endsWith('flaky'))) {
      expect(d.attempts[0]?.status).toBe(500); // the first attempt failed, a retry elsewhere succeeded
    }
    const ids = deliveries.map((d) => d.event.transaction_id);
    const again = await Promise.all(
      ids.flatMap((id) => [mock.webhooks.redeliver(id), mock.webhooks.redeliver(id)]),
    );
    expect(again.every((d) => d.delivered)).toBe(true);
    const counts = await completions();
    for (const id of ids) expect(counts.get(id)).toBe(1);
  });
});
