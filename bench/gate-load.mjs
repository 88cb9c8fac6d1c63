// The load of the gate mode's throughput part (started by gate.mjs against one gate-app.mjs): checks
// the app's answers once, then measures the same route without the gate (`/plain`), with it for an
// account answered from the cache (`/gated`, `/wrapped`), and with it for an inactive account navigating
// as a browser does (`/gated`, 303 to the paywall with the link reused), in alternating windows.
// Usage: node gate-load.mjs '{"port":N,"concurrency":16,"warmupMs":2000,"requests":600,"blocks":150}'
// Prints one line `BENCH_RESULT {json}`; exits 1 with the error on stderr when a check failed.
// Kinds: `plain`, `noop` (a no-op async middleware), `gated` (the gate as a middleware), `wrapped`
// (the gate wrapping the handler), `denied`.
//
// Each window keeps `concurrency` requests in flight over as many keep-alive connections (undici's
// Pool, the fastest client Node has) until it sent `requests`: req/s, every request's latency (hrtime), and
// the app process's CPU time per request (its process.cpuUsage() before and after, from a control
// route). Windows are short and come in blocks (BLOCK) where each gated kind sits between two
// windows of its baseline: this VM's speed changes within a tenth of a second, so a ratio is only
// fair against neighbours (see gate.mjs).
import { Pool } from 'undici';
import { ALLOWED, DENIED_API, DENIED_NAVIGATION, PAYWALL_PATH } from './gate-shared.mjs';
import { distribution, ns } from './percall.mjs';
import { reportAndExit } from './shared.mjs';

const o = JSON.parse(process.argv[2] ?? '{}');
const pool = new Pool(`http://127.0.0.1:${o.port}`, { connections: o.concurrency, pipelining: 1 });

/** The kinds measured: path, headers, and the status every answer must have. */
const KINDS = {
  plain: { path: '/plain', headers: ALLOWED, status: 200 },
  noop: { path: '/noop', headers: ALLOWED, status: 200 },
  gated: { path: '/gated', headers: ALLOWED, status: 200 },
  wrapped: { path: '/wrapped', headers: ALLOWED, status: 200 },
  denied: { path: '/gated', headers: DENIED_NAVIGATION, status: 303 },
};

/** The app's answer, read whole. */
async function get(path, headers = {}) {
  const { statusCode, headers: h, body } = await pool.request({ path, method: 'GET', headers });
  return { status: statusCode, headers: h, text: await body.text() };
}

/** The app process's CPU time and the mock's request counts. */
const stats = async () => JSON.parse((await get('/__bench/stats')).text);

/** Fails the run with what was answered. */
function expectThat(ok, what, answer) {
  if (!ok) throw new Error(`${what}: got ${answer.status} ${JSON.stringify(answer.headers)} ${answer.text}`);
}

/** Every kind answers as it must, and the gate asked the service once per account and once for the link. */
async function check() {
  const plain = await get('/plain', ALLOWED);
  expectThat(plain.status === 200 && plain.text === '{"ok":true,"report":"monthly"}', '/plain', plain);
  const noop = await get('/noop', ALLOWED);
  expectThat(noop.status === 200 && noop.text === plain.text, '/noop', noop);
  const gated = await get('/gated', ALLOWED);
  expectThat(gated.status === 200 && gated.text === plain.text, '/gated (active)', gated);
  const wrapped = await get('/wrapped', ALLOWED);
  expectThat(wrapped.status === 200 && wrapped.text === plain.text, '/wrapped (active)', wrapped);
  const nav = await get('/gated', DENIED_NAVIGATION);
  expectThat(
    nav.status === 303 && String(nav.headers.location).includes(`${PAYWALL_PATH}?u=`),
    '/gated (navigation)',
    nav,
  );
  const api = await get('/gated', DENIED_API);
  const problem = api.status === 402 ? JSON.parse(api.text) : {};
  expectThat(
    String(api.headers['content-type']).startsWith('application/problem+json') &&
      problem.reason === 'inactive' &&
      problem.upgrade_url === nav.headers.location,
    '/gated (API)',
    api,
  );
  const s = await stats();
  if (s.status !== 2 || s.resolve !== 1)
    throw new Error(`after the checks: ${JSON.stringify(s)}, expected 2 status, 1 resolve`);
  return s;
}

/** Latencies of one window (ns), reused. */
const latencies = new Float64Array(o.requests);

/**
 * One window of `kind`: `requests` requests, `concurrency` in flight. A window is a number of
 * requests, not of milliseconds, so that it holds as many in Express as in Hono (6 times faster).
 */
async function window(kind, requests) {
  const { path, headers, status } = KINDS[kind];
  const before = await stats();
  let issued = 0;
  let count = 0;
  let errors = 0;
  let firstError = '';
  const t0 = performance.now();
  const loop = async () => {
    while (issued < requests) {
      issued++;
      const start = ns();
      try {
        const res = await pool.request({ path, method: 'GET', headers });
        await res.body.dump();
        if (res.statusCode !== status) {
          errors++;
          firstError ||= `HTTP ${res.statusCode}`;
        }
      } catch (err) {
        errors++;
        firstError ||= String(err?.message ?? err);
      }
      latencies[count] = Number(ns() - start);
      count++;
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, loop));
  const elapsedMs = performance.now() - t0;
  const after = await stats();
  if (errors) throw new Error(`${kind}: ${errors} of ${count} requests failed, first: ${firstError}`);
  const { p50, p99 } = distribution(latencies, count);
  return {
    kind,
    count,
    elapsedMs,
    rps: (count / elapsedMs) * 1000,
    cpuUsPerRequest: (after.cpuUs - before.cpuUs) / count,
    latency: { p50, p99 },
  };
}

/**
 * One block of windows, repeated: each gated kind between two windows of what it is compared with
 * (the wrapped route between two of the route alone, the middleware between two no-op middlewares,
 * a denied navigation between the route alone of this block and of the next), so that a ratio is
 * taken against neighbours a few milliseconds away on both sides.
 */
const BLOCK = ['plain', 'wrapped', 'plain', 'noop', 'gated', 'noop', 'plain', 'denied'];

async function main() {
  const checked = await check();
  // Warm-up: the blocks' windows in turn, until warmupMs has passed.
  const warmEnd = performance.now() + o.warmupMs;
  while (performance.now() < warmEnd) for (const kind of BLOCK) await window(kind, o.requests);
  const windows = [];
  for (let b = 0; b < o.blocks; b++) for (const kind of BLOCK) windows.push(await window(kind, o.requests));
  const end = await stats();
  if (end.status !== checked.status || end.resolve !== checked.resolve)
    throw new Error(
      `the service was asked during the run: ${JSON.stringify(checked)} → ${JSON.stringify(end)}`,
    );
  return { windows, service: end };
}

reportAndExit(main());
