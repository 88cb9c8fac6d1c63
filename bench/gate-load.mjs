// The load of the gate mode's throughput part (started by gate.mjs against one gate-app.mjs): checks
// the app's answers once, then measures the same route without the gate (`/plain`), with it for an
// account answered from the cache (`/gated`), and with it for an inactive account navigating as a
// browser does (`/gated`, 303 to the paywall with the link reused), in alternating windows.
// Usage: node gate-load.mjs '{"port":N,"concurrency":16,"warmupMs":2000,"durationMs":1500,"pairs":4}'
// Prints one line `BENCH_RESULT {json}`; exits 1 with the error on stderr when a check failed.
// Kinds: `plain`, `noop` (a no-op async middleware), `gated` (the gate as a middleware), `wrapped`
// (the gate wrapping the handler), `denied`.
//
// Each window keeps `concurrency` requests in flight over as many keep-alive connections (undici's
// Pool, the fastest client Node has) for `durationMs`: req/s, every request's latency (hrtime), and
// the app process's CPU time per request (its process.cpuUsage() before and after, from a control
// route). Windows come in rounds of one per kind, in an order shuffled each round, so that no kind always
// follows the same neighbour; the ratio of a round is taken between its own windows.
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
const ORDER = Object.keys(KINDS);

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

const latencies = new Float64Array(1 << 21);

/** One window of `kind` for `ms`; `timed` false for warm-up. */
async function window(kind, ms) {
  const { path, headers, status } = KINDS[kind];
  const before = await stats();
  let count = 0;
  let errors = 0;
  let firstError = '';
  const t0 = performance.now();
  const end = t0 + ms;
  const loop = async () => {
    while (performance.now() < end) {
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
      if (count < latencies.length) latencies[count] = Number(ns() - start);
      count++;
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, loop));
  const elapsedMs = performance.now() - t0;
  const after = await stats();
  if (errors) throw new Error(`${kind}: ${errors} of ${count} requests failed, first: ${firstError}`);
  return {
    kind,
    count,
    elapsedMs,
    rps: (count / elapsedMs) * 1000,
    cpuUsPerRequest: (after.cpuUs - before.cpuUs) / count,
    latency: distribution(latencies, Math.min(count, latencies.length)),
  };
}

/**
 * `list` in an order of round `round`'s own (a fixed seed per round: runs are repeatable). Rotating
 * one order would keep each kind after the same neighbour (plain always after denied, whose
 * garbage the next window collects); shuffled, no kind has a neighbour of its own.
 */
function shuffled(list, round) {
  // mulberry32, seeded with the round.
  let seed = (round + 1) * 0x9e3779b9;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

async function main() {
  const checked = await check();
  // Warm-up: every kind in turn, in short windows, until warmupMs has passed.
  const warmEnd = performance.now() + o.warmupMs;
  while (performance.now() < warmEnd) for (const kind of ORDER) await window(kind, 250);
  const rounds = [];
  for (let r = 0; r < o.pairs; r++) {
    const round = {};
    for (const kind of shuffled(ORDER, r)) {
      round[kind] = await window(kind, o.durationMs);
    }
    rounds.push(round);
  }
  const end = await stats();
  if (end.status !== checked.status || end.resolve !== checked.resolve)
    throw new Error(
      `the service was asked during the run: ${JSON.stringify(checked)} → ${JSON.stringify(end)}`,
    );
  return { rounds, service: end };
}

reportAndExit(main());
