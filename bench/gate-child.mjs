// The gate mode's per-call measurement in a fresh process (started by gate.mjs): `gate.check` from
// the cache, in process, every call timed on its own with process.hrtime.bigint().
// Usage: node gate-child.mjs '{"kind":"percall","blocks":10,"calls":20000,"warmupMs":2000}'
// Prints one line `BENCH_RESULT {json}`; exits 1 with the error on stderr when a check failed.
//
// Calls, in alternating blocks of `calls` each:
//   lookup      `access.isActive` of the allowed account (a memory hit): the floor under the gate
//   allowed     `gate.check(request, need)` with a Fetch `Request` (protect, Hono): allowed, source cache
//   allowedNode the same with a Node-style request (`{ method, headers }` as Express hands it over)
//   deniedApi   an inactive account asking as an API client: 402 problem+json, link reused
//   deniedNav   the same account navigating: 303 to the paywall, link reused
// The embedded mock counts the status and resolve requests: one status per account and one resolve
// in the whole child (checked), so every timed call was answered from memory.
import { createGate } from 'billing-sdk';
import {
  ALLOWED,
  DENIED_API,
  DENIED_NAVIGATION,
  GATE_NEED,
  GATE_TTL_MS,
  mockedAccess,
  PAYWALL_PATH,
} from './gate-shared.mjs';
import { distribution, timedCalls } from './percall.mjs';
import { childMain } from './shared.mjs';

/** The checks before and after timing: what each call must answer. */
const EXPECT = {
  lookup: (answer) => answer === true,
  allowed: (d) => d.allowed === true && d.source === 'cache',
  allowedNode: (d) => d.allowed === true && d.source === 'cache',
  deniedApi: (d) => d.allowed === false && d.reason === 'inactive' && d.status === 402,
  deniedNav: (d) =>
    d.allowed === false &&
    d.status === 303 &&
    d.response.headers.get('location').includes(`${PAYWALL_PATH}?u=`),
};

async function percall(o) {
  const { mock, billing, access } = await mockedAccess();
  const paywall = (email) => ({ signingKey: mock.signingKey, email, linkTtlMs: GATE_TTL_MS });
  const fetchGate = createGate({
    billing,
    access,
    account: (request) => request.headers.get('x-account') ?? undefined,
    paywall: paywall((request) => request.headers.get('x-email') ?? undefined),
  });
  const nodeGate = createGate({
    billing,
    access,
    account: (req) => req.headers['x-account'],
    paywall: paywall((req) => req.headers['x-email']),
  });
  const fetchRequest = (headers) => new Request('http://app.local/reports', { headers });
  const allowedRequest = fetchRequest(ALLOWED);
  const nodeRequest = { method: 'GET', url: '/reports', headers: { ...ALLOWED, host: 'app.local' } };
  const apiRequest = fetchRequest(DENIED_API);
  const navRequest = fetchRequest(DENIED_NAVIGATION);
  const calls = {
    lookup: () =>
      access.isActive({
        account_ref_id: ALLOWED['x-account'],
        subscription: GATE_NEED.subscription,
        tier: GATE_NEED.tier,
      }),
    allowed: () => fetchGate.check(allowedRequest, GATE_NEED),
    allowedNode: () => nodeGate.check(nodeRequest, GATE_NEED),
    deniedApi: () => fetchGate.check(apiRequest, GATE_NEED),
    deniedNav: () => fetchGate.check(navRequest, GATE_NEED),
  };
  const verify = async (when) => {
    for (const [name, call] of Object.entries(calls)) {
      const answer = await call();
      if (!EXPECT[name](answer)) throw new Error(`${name} ${when}: unexpected ${JSON.stringify(answer)}`);
    }
  };
  const service = () => ({
    status: mock.requests.count({ method: 'GET', path: '/api/account/' }),
    resolve: mock.requests.count({ method: 'GET', path: '/api/resolve/public-url/' }),
  });

  await verify('before timing');
  const first = service();
  const names = Object.keys(calls);
  const scratch = new Float64Array(o.calls);
  const warmUntil = performance.now() + o.warmupMs;
  while (performance.now() < warmUntil)
    for (const name of names) await timedCalls(calls[name], o.calls / 5, scratch);
  const times = Object.fromEntries(names.map((name) => [name, new Float64Array(o.blocks * o.calls)]));
  for (let b = 0; b < o.blocks; b++) {
    // Rotated each block, so that no call always follows the same neighbour.
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + b) % names.length];
      await timedCalls(calls[name], o.calls, times[name], b * o.calls);
    }
  }
  await verify('after timing');
  const last = service();
  if (
    first.status !== 2 ||
    first.resolve !== 1 ||
    last.status !== first.status ||
    last.resolve !== first.resolve
  )
    throw new Error(
      `service requests: ${JSON.stringify(first)} after the first calls, ${JSON.stringify(last)} at the end`,
    );
  const sync = syncPath(fetchGate, nodeGate);
  await access.close();
  await mock.close();
  return {
    calls: Object.fromEntries(names.map((name) => [name, distribution(times[name])])),
    sync,
    service: last,
    timed: names.length * o.blocks * o.calls,
  };
}

/**
 * The gate's own CPU on its synchronous path (an allowed request answered from memory), the
 * handler wrapped: `gate.hono(need, handler)(c)` and `gate.express(need, handler)(req, res, next)`,
 * against reading who asks alone (what the route does without the gate). Too short to time one
 * by one (the timer costs more), so blocks of calls are timed whole: ns per call, median of blocks.
 */
function syncPath(fetchGate, nodeGate) {
  const answer = new Response('ok');
  const request = new Request('http://app.local/reports', { headers: ALLOWED });
  const context = { req: { raw: request }, res: answer, set() {} };
  const req = { method: 'GET', url: '/reports', headers: { ...ALLOWED } };
  const res = { locals: {}, statusCode: 200, writeHead() {}, end() {}, once() {} };
  const next = () => {};
  const hono = fetchGate.hono(GATE_NEED, () => answer);
  const express = nodeGate.express(GATE_NEED, () => answer);
  const calls = {
    readAccount: () => (request.headers.get('x-account') ? answer : undefined),
    honoWrapped: () => hono(context),
    expressWrapped: () => express(req, res, next),
  };
  for (const [name, call] of Object.entries(calls))
    if (call() !== answer) throw new Error(`${name}: not answered at once from memory`);
  const N = 100_000;
  const ns = Object.fromEntries(Object.keys(calls).map((k) => [k, []]));
  for (let b = 0; b < 15; b++) {
    for (const [name, call] of Object.entries(calls)) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < N; i++) call();
      ns[name].push(Number(process.hrtime.bigint() - t0) / N);
    }
  }
  const median = (list) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)];
  return Object.fromEntries(Object.entries(ns).map(([k, list]) => [k, median(list)]));
}

childMain({ percall });
