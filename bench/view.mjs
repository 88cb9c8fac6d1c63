// The account state in the browser (issue 43): instance A serves `gate.state` (Hono on
// @hono/node-server) and holds the stream a `createAccountView` reads; instance B, another process,
// receives the mock's webhooks. Both share `redisAccessStore` on one redis-server. Each round the
// subscription flips at the mock, which posts its webhook to B; the delay is from B receiving it to
// the view in A changing (one clock, the host's). Then the memory of 1,000 open streams, the JSON
// endpoint's answers per second from memory, and the view's size.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { serve } from '@hono/node-server';
import { BillingClient, createAccessCache, createGate, createNodeWebhookHandler } from 'billing-sdk';
import { redisAccessStore } from 'billing-sdk/redis';
import { createAccountView } from 'billing-sdk/view';
import { Hono } from 'hono';
import { killOnExit, startRedisServer } from '../scripts/servers.mjs';
import { measure } from '../scripts/size.mjs';
import { goal, isMain, quantile, r3, timeTasks } from './lib.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'Account state in the browser';
export const how =
  "Two instances sharing `redisAccessStore` on one redis-server (node-redis): A (this process) serves `gate.state` on Hono and @hono/node-server, B (a child process) receives the webhooks. A `createAccountView` in this process reads A over loopback. 30 rounds: the subscription flips at the mock, which posts its webhook to B; the delay is from B receiving it to the view changing (one clock, the host's). Memory: 1,000 streams opened on one handler (`state.fetch`), heap after a full GC, per stream. Answers per second: JSON reads of one warm account through `state.fetch` (no HTTP). Size: `npm run size`'s row.";

const ROUNDS = 30;
const ACCOUNT = 'acct_0';
const now = () => performance.timeOrigin + performance.now();

async function redisClient(url) {
  const { createClient } = await import('redis');
  const client = createClient({ url });
  client.on('error', () => {});
  return client.connect();
}

function accessOn(redis, prefix, mock) {
  const billing = new BillingClient({
    apiKey: mock.apiKey,
    baseUrl: mock.baseUrl,
    logLevel: 'off',
    maxRetries: 0,
  });
  const access = createAccessCache(billing, { store: redisAccessStore(redis, { prefix }) });
  return { billing, access };
}

/** Instance B: the webhook receiver; tells the parent when each webhook arrived. */
async function receiver({ redisUrl, prefix, mock }) {
  const { access } = accessOn(await redisClient(redisUrl), prefix, mock);
  const webhook = createNodeWebhookHandler({ access, onEvent: () => {} });
  const server = createServer((req, res) => {
    process.send({ received: now() });
    webhook(req, res);
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
}

function next(child, pick) {
  return new Promise((resolve) => {
    const on = (m) => {
      if (!pick(m)) return;
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
  });
}

async function gc() {
  setFlagsFromString('--expose-gc');
  const collect = runInNewContext('gc');
  for (let i = 0; i < 3; i++) {
    collect();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Runs the scenario: its goals first, then the figures behind them. */
export async function run() {
  const { startMock } = await import('./lib.mjs');
  const mock = await startMock({ accounts: 1 });
  const redisServer = await startRedisServer();
  const prefix = 'bench:view:';
  const child = killOnExit(
    fork(new URL(import.meta.url), [
      JSON.stringify({
        redisUrl: redisServer.url,
        prefix,
        mock: { apiKey: mock.apiKey, baseUrl: mock.baseUrl },
      }),
    ]),
  );
  const { port } = await next(child, (m) => 'port' in m);
  mock.webhooks.register(`http://127.0.0.1:${port}/webhooks`);

  const redis = await redisClient(redisServer.url);
  const { billing, access } = accessOn(redis, prefix, mock);
  const gate = createGate({
    billing,
    access,
    account: (request) => request.headers.get('x-account') ?? undefined,
  });
  const view = { credits: [{ product_code: 'ai-assistant', meter_code: 'credits' }] };
  const state = gate.state({ ...view, streams: { perAccount: 1_000 } });
  const app = new Hono();
  app.get('/state', state.hono);
  const server = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const url = `http://127.0.0.1:${server.address().port}/state`;
  const browser = createAccountView({
    url,
    fetch: (u, init) => fetch(u, { ...init, headers: { ...init?.headers, 'x-account': ACCOUNT } }),
  });
  await browser.ready;

  // Webhook at B → the view in A changed.
  const delays = [];
  let active = true;
  for (let round = 0; round < ROUNDS; round++) {
    active = !active;
    const changed = new Promise((resolve) => {
      const stop = browser.subscribe(() => {
        if (browser.get().active === active) {
          stop();
          resolve(now());
        }
      });
    });
    const received = next(child, (m) => 'received' in m);
    await (active ? mock.lifecycle.paymentSucceeded : mock.lifecycle.cancel)({ account_ref_id: ACCOUNT });
    const [{ received: at }, seen] = await Promise.all([received, changed]);
    delays.push(seen - at);
  }
  browser.close();
  const sorted = delays.sort((a, b) => a - b);

  // Memory per open stream, on one handler without HTTP.
  const memory = gate.state({ ...view, streams: { perAccount: 1_000 } });
  const request = (signal, accept = 'text/event-stream') =>
    new Request('http://app.test/state', { headers: { accept, 'x-account': ACCOUNT }, signal });
  await (await memory.fetch(request(undefined, 'application/json'))).text();
  await gc();
  const before = process.memoryUsage().heapUsed;
  const controllers = Array.from({ length: 1_000 }, () => new AbortController());
  const streams = await Promise.all(controllers.map((c) => memory.fetch(request(c.signal))));
  await gc();
  const perStream = (process.memoryUsage().heapUsed - before) / streams.length;
  for (const c of controllers) c.abort();
  await memory.close();
  // What is left is the handler's: the Responses the bench itself held go first.
  streams.length = 0;
  controllers.length = 0;
  await gc();
  const after = process.memoryUsage().heapUsed - before;

  // The JSON endpoint from memory.
  const timed = await timeTasks({
    'state.fetch (JSON, warm)': async () => {
      await (await state.fetch(request(undefined, 'application/json'))).text();
    },
  });
  const json = timed['state.fetch (JSON, warm)'];

  const size = (await measure()).find((r) => r.name === 'billing-sdk/view');

  await state.close();
  server.close();
  child.kill();
  await access.close();
  await redis.close();
  await Promise.all([redisServer.stop(), mock.close()]);

  const p50 = r3(quantile(sorted, 0.5));
  const p99 = r3(quantile(sorted, 0.99));
  const goals = [
    goal(
      'webhook received by instance B → the view on instance A changed (Redis)',
      `p50 ${p50} ms, p99 ${p99} ms, max ${r3(sorted.at(-1))} ms (${sorted.length} samples)`,
      'p99 ≤ 250 ms',
      p99 <= 250,
    ),
    goal(
      'memory per open stream; left after all closed',
      `${Math.round(perStream)} B; ${Math.round(after / 1024)} KB`,
      undefined,
      null,
    ),
    goal(
      'state endpoint answers per second from memory (JSON, no HTTP)',
      `${json.hz}/s (p99 ${json.p99} µs)`,
      undefined,
      null,
    ),
    goal('billing-sdk/view size (gzip)', `${size.measured} B`, '≤ 2,000 B', size.measured <= 2_000),
  ];
  return {
    goals,
    rounds: ROUNDS,
    delays_ms: sorted.map(r3),
    perStreamBytes: Math.round(perStream),
    json,
    viewBytes: size.measured,
  };
}

if (isMain(import.meta)) await receiver(JSON.parse(process.argv[2]));
