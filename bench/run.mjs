// `npm run bench`: the whole benchmark in one command. Installs bench's own dependencies and builds the
// SDK when needed, starts the server process, measures every client in interleaved rounds (each sample
// in a fresh child), cold imports, memory over 1000 pages and bundle sizes, then writes
// bench/RESULTS.md and prints a summary.
//
//   npm run bench                                 # the full run (about 4.5 min on 2 cores)
//   npm run bench -- --only billing-sdk --rounds 3 --duration 1000 --skip cold,memory,sizes
//                                                 # a quick check while optimising (fetch is always kept)
//
// Flags: --rounds N (5), --duration ms (1500; not the gate mode's: its windows are counted in requests), --warmup ms (2000), --concurrency 1,32, --only a,b,
// --cold N (15 samples per package), --skip cold,memory,sizes, --out file (bench/RESULTS.md), --build.
// The normal run also reports billing-sdk's CPU per request against plain `ky(...).json()` (goal ≤ 1.10×).
//
//   npm run bench -- --workloads                  # the workload mode instead (about 3 min on 2 cores)
//   npm run bench -- --workloads --skip storm,heap --rounds 1 --events 500
//
// Workload mode (bench/workloads.mjs, bench/workload-child.mjs): the server answers after --latency ms
// (20) and billing-sdk is measured against the peers on whole workloads: a walk of 200 pages
// (billing-sdk `pages({ concurrency })` at 1 and 8 vs openai-node's and stripe-node's own
// auto-pagination, --rounds N rounds, 3 by default here), --events N usage events (2000: a sequential
// `usage.record` loop vs `recordMany` at concurrency 16, then recordMany under the server's fault mode),
// a --storm ms (10000) storm of 429s against 16 concurrent loops per client, and the heap while walking
// 1000 pages at concurrency 8. --skip takes walk,events,faults,storm,heap; --only takes billing-sdk
// (always kept), openai, stripe; --out and --build as above.
//
//   npm run bench -- --access                     # the access-cache mode (about 3 min on 2 cores)
//   npm run bench -- --access --access-seconds 10 --rounds 1 --skip heap --out /tmp/access.md
//
// Access mode (bench/access.mjs, bench/access-child.mjs; issue 18): `createAccessCache` against the bench
// server with no added latency (loopback). percall: a memory hit (`access.isActive` on a warm key) vs
// `billing.accounts.isActive`, every call timed with process.hrtime.bigint() in alternating blocks, one
// fresh child per --rounds (3): the ratio of means (goal ≥ 100×) and the hit's p50/p99 (goal p99 ≤ 50 µs).
// hotpath: --access-seconds s (60) of lookups at 2000/s over 1000 accounts (zipf), a lifecycle webhook
// through `createWebhookHandler({ access })` every second, ttlMs 30 s / denyTtlMs 5 s: requests that
// reached the server vs lookups, against the count ttl arithmetic predicts from the run's own trace.
// heap: heapUsed with 100 000 entries (`maxEntries: 100_000`), filled through an in-memory AccessStore.
// --skip takes percall,hotpath,heap.
//
//   npm run bench -- --tracker                    # the usage-tracker mode (about 6 min on 2 cores)
//   npm run bench -- --tracker --rounds 1 --events 2000 --skip throughput --out /tmp/tracker.md
//
// Tracker mode (bench/tracker.mjs, bench/tracker-child.mjs; issue 19): `createUsageTracker` on the bench
// server's usage ledger; each child sets the server's latency it needs. percall: `track` (memory spool)
// vs `usage.record` over loopback, as above (goal ≥ 100×). throughput: 16, 256 and 1024 concurrent
// `track` loops into `fileSpool(dir)` for 5 s: events/s (goal ≥ 20 000), track p50/p99, events per
// fdatasync, then what the server recorded + what a reopened spool holds. drain: --events N (10 000) at
// --latency ms (20) per response, concurrency 16: `recordMany` vs track + flush (memory, then file
// spool), --rounds rounds. aggregate: 5000 unit events at 1000/s with and without
// `aggregate: { windowMs: 500 }`: requests sent and totals. --skip takes percall,throughput,drain,aggregate.
//
//   npm run bench -- --gate                      # the gate mode (about 5 min on 2 cores; --rounds 5: 8.5)
//   npm run bench -- --gate --rounds 1 --skip percall --out /tmp/gate.md
//
// Gate mode (bench/gate.mjs, gate-app.mjs, gate-load.mjs, gate-child.mjs; issue 26): `createGate` in
// Express 5 and in Hono 4 (@hono/node-server), the same route with and without the gate, on an account
// answered from the access cache (the SDK's embedded mock in the app's process, no bench server).
// throughput: per framework and --rounds, a fresh app and a fresh load process (16 in flight): req/s,
// latency and the app's CPU per request of the route without the gate, behind a no-op middleware,
// gated and allowed (the middleware form, and the handler wrapped), gated and denied (a navigation:
// 303 to the paywall, the link reused), in 24 rounds of short alternating --duration windows: the
// ratios wrapped ÷ without and middleware ÷ no-op middleware (goals ≥ 0.95) and the resolve requests
// (one per process). percall: `gate.check`
// from the cache, every call timed, one fresh child per --rounds (goal p99 ≤ 20 µs). --skip takes
// throughput,percall.
//
//   npm run bench -- --invalidation               # invalidation across instances (about 1 min on 2 cores)
//   npm run bench -- --invalidation --invalidation-rounds 20 --skip cluster --out /tmp/inv.md
//
// Invalidation mode (bench/invalidation.mjs, invalidation-child.mjs; issue 28): 4 fresh processes share
// `redisAccessStore`, on one redis-server, then on a 3-master, 3-replica Redis Cluster (made by
// test/redis/cluster.ts); each round the account flips at the mock, every process looks it up every 2 ms
// while one invalidates: the delay from `invalidate` to each process seeing the new state over
// --invalidation-rounds (60) rounds, p50/p99/max (goal p99 ≤ 100 ms), and requests per round (1).
// --skip takes node,cluster.
//
//   npm run bench -- --postgres                   # billing-sdk/postgres (about 2 min on 2 cores)
//   npm run bench -- --postgres --events 5000 --skip inbox --out /tmp/pg.md
//
// Postgres mode (bench/postgres.mjs, postgres-child.mjs; issue 27): a PostgreSQL cluster of the run's own
// (test/postgres/cluster-server.mjs), node-postgres (and postgres.js), the SDK's mock in this process.
// txcost: the app's transaction (BEGIN; INSERT; COMMIT) with and without `track(…, { transaction })`
// inside, alternating blocks, each timed: p50/p99 of both and the difference (and of its statement
// alone). relay: --events N (20 000) events in the outbox, then 1 relay process vs 3 drain them to the
// mock: events/s, each key once (then 3 000 with the mock answering after 20 ms). latency: one idle relay, events committed one at a time: COMMIT returned → the mock received
// it, p50/p99/max (goal p99 ≤ 100 ms; default pollMs, so NOTIFY is measured). inbox: webhook
// deliveries/s through createWebhookHandler with postgresDedupeStore and the row written through
// `{ transaction }` vs the memory store, 16 in flight, one row per event. --skip takes
// txcost,relay,latency,inbox.
//
//   npm run bench -- --redis                      # billing-sdk/redis, one node vs a cluster (about 2 min on 2 cores)
//   npm run bench -- --redis --rounds 1 --redis-window 200 --skip wait --out /tmp/redis.md
//
// Redis mode (bench/redis.mjs, redis-child.mjs, redis-harness.mjs; issue 28): one redis-server vs a
// 3-master, 3-replica Redis Cluster (the tests' harness, test/redis/*.ts), the SDK's mock in this
// process; one fresh child per --rounds (3), the four clients (ioredis Redis / Cluster, node-redis
// createClient / createCluster) connected at once, measured in alternating blocks of --redis-window ms
// (500) windows, 16 calls in flight, every call timed. ops: the shared access lookup (createAccessCache
// on redisAccessStore, each lookup a store read that finds another instance's answer), the dedupe claim
// (a fresh id; on the cluster also every id in one slot) and the spool append: ops/s and p50/p99.
// wait: spool append with and without `waitReplicas: 1` (a master with one replica; the cluster), 1 and
// 16 in flight: p50/p99 and appends/s. --skip takes ops,wait.
//
// RESULTS.md: each mode (--workloads, --access, --tracker, --gate, --invalidation, --postgres, --redis) writes only its own section, between
// `<!-- <mode>:start -->` and `<!-- <mode>:end -->` (appended at the end when missing), and leaves the
// rest of the file as it is (bench/sections.mjs); the normal run rewrites the file and carries every mode
// section over unchanged. A partial mode run (--skip, --only) rewrites its section with only what it
// measured: give it --out for a scratch file. One mode at a time.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  ACCESS_PARTS,
  renderAccessCompact,
  renderAccessMarkdown,
  runAccess,
  summarizeAccess,
} from './access.mjs';
import { measureColdImports } from './cold-import.mjs';
import { GATE_PARTS, renderGateCompact, renderGateMarkdown, runGate, summarizeGate } from './gate.mjs';
import {
  INVALIDATION_PARTS,
  renderInvalidationCompact,
  renderInvalidationMarkdown,
  runInvalidation,
  summarizeInvalidation,
} from './invalidation.mjs';
import { measureMemory } from './memory.mjs';
import {
  POSTGRES_PARTS,
  renderPostgresCompact,
  renderPostgresMarkdown,
  runPostgres,
  summarizePostgres,
} from './postgres.mjs';
import { REDIS_PARTS, renderRedisCompact, renderRedisMarkdown, runRedis, summarizeRedis } from './redis.mjs';
import { BASELINE, renderCompact, renderMarkdown, summarize } from './report.mjs';
import { extractSections, spliceSection } from './sections.mjs';
import { resultOf, runNode, startServing } from './spawn.mjs';
import {
  renderTrackerCompact,
  renderTrackerMarkdown,
  runTracker,
  summarizeTracker,
  TRACKER_PARTS,
} from './tracker.mjs';
import {
  renderWorkloadsCompact,
  renderWorkloadsMarkdown,
  runWorkloads,
  summarizeWorkloads,
  WORKLOAD_CLIENTS,
  WORKLOAD_PARTS,
} from './workloads.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = resolve(benchDir, '..');

/** Every client, in the table's order. Each is `clients/<name>.mjs`. */
const ALL_CLIENTS = [
  'fetch',
  'node-http',
  'billing-sdk',
  'billing-sdk-traced',
  'billing-sdk-fetch',
  'ky',
  'openai',
  'stripe-node-http',
  'stripe-fetch',
];

const started = performance.now();
const argv = process.argv.slice(2);
const { values: flags } = parseArgs({
  args: argv,
  options: {
    // 5 for the normal run, 3 (walk rounds) for --workloads.
    rounds: { type: 'string' },
    duration: { type: 'string' },
    // 2 s, not less: traced per 250 ms on this 2-core machine (Node 20), every client (raw fetch
    // included) keeps speeding up for 1.5–2 s while V8 optimises undici, zod and the clients; with a
    // 0.75 s warm-up, the ramp leaked into the window and billed the slower-warming clients for it.
    warmup: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '1,32' },
    only: { type: 'string' },
    cold: { type: 'string', default: '15' },
    skip: { type: 'string', default: '' },
    out: { type: 'string', default: join(benchDir, 'RESULTS.md') },
    build: { type: 'boolean', default: false },
    workloads: { type: 'boolean', default: false },
    access: { type: 'boolean', default: false },
    'access-seconds': { type: 'string', default: '60' },
    tracker: { type: 'boolean', default: false },
    gate: { type: 'boolean', default: false },
    invalidation: { type: 'boolean', default: false },
    'invalidation-rounds': { type: 'string', default: '60' },
    postgres: { type: 'boolean', default: false },
    redis: { type: 'boolean', default: false },
    'redis-window': { type: 'string', default: '500' },
    latency: { type: 'string', default: '20' },
    // 2000 for --workloads, 10 000 (the drain) for --tracker, 20 000 (the outbox) for --postgres.
    events: { type: 'string' },
    storm: { type: 'string', default: '10000' },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  process.stdout.write(`${readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0]}\n`);
  process.exit(0);
}

/** A bad flag: say so and stop, without a stack trace. @param {string} message */
function usage(message) {
  process.stderr.write(`bench: ${message} (see --help)\n`);
  process.exit(2);
}

/** @param {string} name @param {string} value */
function positiveInt(name, value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) usage(`--${name} must be a positive integer, got ${value}`);
  return n;
}
const workloadMode = flags.workloads;
/** The mode section this run writes, or null for the normal run. */
const mode = ['workloads', 'access', 'tracker', 'gate', 'invalidation', 'postgres', 'redis'].filter(
  (m) => flags[m],
);
if (mode.length > 1) usage(`--${mode.join(' and --')}: one mode at a time`);
const sectionMode = mode[0] ?? null;
const rounds = positiveInt('rounds', flags.rounds ?? (sectionMode ? '3' : '5'));
// The gate mode's windows are counted in requests instead (gate.mjs): --duration does not apply.
const durationMs = positiveInt('duration', flags.duration ?? '1500');
const warmupMs = positiveInt('warmup', flags.warmup);
const coldN = positiveInt('cold', flags.cold);
const concurrencies = flags.concurrency.split(',').map((c) => positiveInt('concurrency', c));
const skip = new Set(flags.skip.split(',').filter(Boolean));
const knownClients = workloadMode ? WORKLOAD_CLIENTS : ALL_CLIENTS;
const only = flags.only ? flags.only.split(',').filter(Boolean) : knownClients;
for (const name of only) {
  if (!knownClients.includes(name)) usage(`unknown client ${name}; known: ${knownClients.join(', ')}`);
}
const modeParts = {
  workloads: WORKLOAD_PARTS,
  access: ACCESS_PARTS,
  tracker: TRACKER_PARTS,
  gate: GATE_PARTS,
  invalidation: INVALIDATION_PARTS,
  postgres: POSTGRES_PARTS,
  redis: REDIS_PARTS,
}[sectionMode];
for (const part of modeParts ? skip : []) {
  if (!modeParts.includes(part))
    usage(`--skip ${part}: with --${sectionMode}, parts are ${modeParts.join(', ')}`);
}
const latencyMs = Number(flags.latency);
if (!Number.isFinite(latencyMs) || latencyMs < 0) usage(`--latency must be ≥ 0 ms, got ${flags.latency}`);
const eventsN = positiveInt(
  'events',
  flags.events ?? { tracker: '10000', postgres: '20000' }[sectionMode] ?? '2000',
);
const stormMs = positiveInt('storm', flags.storm);
const accessSeconds = positiveInt('access-seconds', flags['access-seconds']);
// Raw fetch is every ratio's denominator, so it is always measured.
const clientNames = ALL_CLIENTS.filter((n) => n === BASELINE || only.includes(n));

const log = (msg) =>
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(3)}s] ${msg}\n`);

/** What `npm install billing-sdk` downloads and unpacks: `npm pack --dry-run` of the repo. */
function packedSize() {
  const [pack] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--silent'], { cwd: root, encoding: 'utf8' }),
  );
  return { packed: pack.size, unpacked: pack.unpackedSize, files: pack.files.length };
}

/** bench/node_modules with every dependency of bench/package.json, installed when one is missing. */
function ensureBenchDeps() {
  const deps = Object.keys(JSON.parse(readFileSync(join(benchDir, 'package.json'), 'utf8')).dependencies);
  const missing = deps.filter((d) => !existsSync(join(benchDir, 'node_modules', d, 'package.json')));
  if (missing.length === 0) return;
  log(`installing bench dependencies (missing: ${missing.join(', ')})`);
  // `npm install`, not `npm ci`: this registry lacks other platforms' optional packages, which `npm ci`
  // can refuse; install still follows bench/package-lock.json.
  execFileSync('npm', ['install', '--prefix', 'bench', '--no-audit', '--no-fund'], {
    cwd: root,
    stdio: 'inherit',
  });
}

/** Newest modification time under `dir`, in ms. @param {string} dir */
function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile())
      newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * Builds the SDK when dist/ is missing, or older than src/ (so an edit to src/ is never benchmarked
 * against a stale build), or when --build is given.
 */
function ensureBuilt() {
  const entry = join(root, 'dist', 'index.js');
  const why = flags.build
    ? '--build'
    : !existsSync(entry)
      ? 'dist/ is missing'
      : newestMtime(join(root, 'src')) > statSync(entry).mtimeMs
        ? 'src/ is newer than dist/'
        : null;
  if (!why) return;
  log(`building the SDK (${why}): npx tsup --silent`);
  execFileSync('npx', ['tsup', '--silent'], { cwd: root, stdio: 'inherit' });
}

/**
 * A hash of every file in dist/: the build that was measured. Taken before and after the run, so a
 * rebuild in the middle (someone else running `npm test` in the same tree) is reported, not mixed in silently.
 */
function distFingerprint() {
  const dir = join(root, 'dist');
  const hash = createHash('sha256');
  try {
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath ?? e.path, e.name))
      .sort();
    for (const f of files) hash.update(relative(dir, f)).update(readFileSync(f));
  } catch {
    return 'missing';
  }
  return hash.digest('hex').slice(0, 12);
}

/**
 * Starts bench/server.mjs and waits for the port it prints. It stops when its stdin closes, so it
 * cannot outlive this process.
 * @param {{workloads: boolean, latencyMs: number} | undefined} [options]  none: the normal server
 * @returns {Promise<{port: number, pageBytes: number, stop: () => Promise<void>}>}
 */
function startServer(options) {
  const args = [join(benchDir, 'server.mjs'), ...(options ? [JSON.stringify(options)] : [])];
  return startServing('server', args, benchDir);
}

/** One sample in a fresh child. */
async function sample(client, port, concurrency, warmup, duration) {
  const options = { client, port, concurrency, warmupMs: warmup, durationMs: duration };
  const run = await runNode([join(benchDir, 'measure-child.mjs'), JSON.stringify(options)], {
    cwd: benchDir,
    // Startup, one checked request, warm-up and the window, plus generous slack: never unbounded.
    timeoutMs: warmup + duration + 30_000,
  });
  return resultOf(run, `${client} at c=${concurrency}`);
}

/** Versions read from the installed packages, not from package.json ranges. @param {string} dist */
function versions(dist) {
  const read = (p) => {
    try {
      return JSON.parse(readFileSync(p, 'utf8')).version;
    } catch {
      return 'not installed';
    }
  };
  const git = (args) => {
    try {
      return execFileSync('git', args, {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return '';
    }
  };
  const commit = git(['rev-parse', '--short', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--', 'src', 'tsup.config.ts', 'package.json'])
    ? ' plus uncommitted changes'
    : '';
  return {
    'billing-sdk': `${read(join(benchDir, 'node_modules/billing-sdk/package.json'))} (dist/ sha256 ${dist}, tree at ${commit || 'unknown commit'}${dirty})`,
    'ky (used by billing-sdk)': read(join(root, 'node_modules/ky/package.json')),
    'zod (used by billing-sdk)': read(join(root, 'node_modules/zod/package.json')),
    ky: read(join(benchDir, 'node_modules/ky/package.json')),
    openai: read(join(benchDir, 'node_modules/openai/package.json')),
    stripe: read(join(benchDir, 'node_modules/stripe/package.json')),
    esbuild: read(join(root, 'node_modules/esbuild/package.json')),
  };
}

function machine() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus.length,
    memoryGiB: (os.totalmem() / 1024 ** 3).toFixed(1),
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    loadavg: os.loadavg(),
  };
}

const command =
  process.env.npm_lifecycle_event === 'bench'
    ? `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`
    : `node bench/run.mjs${argv.length ? ` ${argv.join(' ')}` : ''}`;

/** The file as it is, or '' when there is none. @param {string} path */
function readOr(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * A mode that writes one section of the results file (`--workloads`, `--access`, `--tracker`): builds
 * and starts the server as the normal run does, measures, splices the section into the file (the
 * rest of it left as it is) and prints a summary.
 * @param {object} m
 * @param {string} m.name    the section and the flag
 * @param {string} m.title   for the terminal
 * @param {object | null} m.server  server options; null: the mode starts the servers it needs
 * @param {string} m.serverNote  for the log
 * @param {(port: number | undefined) => Promise<object>} m.measure
 * @param {(data: object) => {goals: {ok: boolean | null}[]}} m.summarize
 * @param {(data: object, summary: object, meta: object) => string} m.render    the section, markers included
 * @param {(summary: object, meta: object) => string} m.compact
 * @param {(data: object, summary: object) => boolean} m.failed  a measurement that could not be made
 * @param {object} [m.meta]  more for the report's meta
 */
async function runSectionMode(m) {
  ensureBenchDeps();
  ensureBuilt();
  const distAtStart = distFingerprint();
  const machineAtStart = machine();
  const server = m.server ? await startServer(m.server) : null;
  log(server ? `server on 127.0.0.1:${server.port} (separate process), ${m.serverNote}` : m.serverNote);
  let data;
  try {
    data = await m.measure(server?.port);
  } finally {
    await server?.stop();
  }
  const meta = {
    date: new Date().toISOString(),
    command,
    rounds,
    ...m.meta,
    machine: machineAtStart,
    node: process.version,
    versions: versions(distAtStart),
    distChanged: distFingerprint() !== distAtStart,
    totalSeconds: (performance.now() - started) / 1000,
  };
  if (meta.distChanged)
    log('WARNING: dist/ changed during the run: the SDK was rebuilt while being measured');
  const summary = m.summarize(data);
  const existing = readOr(flags.out) || '# billing-sdk benchmark results\n';
  writeFileSync(flags.out, spliceSection(existing, m.name, m.render(data, summary, meta)));
  process.stdout.write(m.compact(summary, meta));
  const shown = relative(process.cwd(), flags.out);
  process.stdout.write(`written ${shown.startsWith('..') ? flags.out : shown} (${m.title} section)\n`);
  if (m.failed(data, summary) || meta.distChanged) process.exitCode = 1;
}

/** `--workloads`: only the workload measurements, written into their own section of the results file. */
function mainWorkloads() {
  return runSectionMode({
    name: 'workloads',
    title: 'Workloads',
    server: { workloads: true, latencyMs },
    serverNote: `${latencyMs} ms latency per response`,
    meta: { latencyMs },
    measure: (port) =>
      runWorkloads({
        port,
        cwd: benchDir,
        log,
        rounds,
        events: eventsN,
        stormMs,
        clients: only.includes('billing-sdk') ? only : ['billing-sdk', ...only],
        skip,
      }),
    summarize: summarizeWorkloads,
    render: renderWorkloadsMarkdown,
    compact: renderWorkloadsCompact,
    failed: (data) =>
      Object.keys(data.walkFailures).length > 0 ||
      Object.keys(data.eventFailures).length > 0 ||
      data.storm.some((s) => s.failed) ||
      Boolean(data.heap?.failed),
  });
}

/** `--access`: the access cache against the round trip it saves, in its own section. */
function mainAccess() {
  return runSectionMode({
    name: 'access',
    title: 'Access cache',
    server: { workloads: true, latencyMs: 0 },
    serverNote: 'no added latency (loopback)',
    meta: { seconds: accessSeconds },
    measure: (port) => runAccess({ port, cwd: benchDir, log, rounds, seconds: accessSeconds, skip }),
    summarize: summarizeAccess,
    render: renderAccessMarkdown,
    compact: renderAccessCompact,
    failed: (data) => Object.keys(data.failures).length > 0,
  });
}

/** `--tracker`: the usage tracker against usage.record and recordMany, in its own section. */
function mainTracker() {
  return runSectionMode({
    name: 'tracker',
    title: 'Usage tracker',
    // Each child sets the latency it needs (none for the per-call comparison).
    server: { workloads: true, latencyMs },
    serverNote: `${latencyMs} ms latency per response, none for the per-call comparison`,
    meta: { latencyMs, events: eventsN },
    measure: (port) => runTracker({ port, cwd: benchDir, log, rounds, events: eventsN, latencyMs, skip }),
    summarize: summarizeTracker,
    render: renderTrackerMarkdown,
    compact: renderTrackerCompact,
    failed: (data) => Object.keys(data.failures).length > 0,
  });
}

/** `--gate`: the same route with and without `createGate`, in Express and Hono, in its own section. */
function mainGate() {
  return runSectionMode({
    name: 'gate',
    title: 'Gate',
    server: null,
    serverNote: 'no bench server: each app process embeds the mock (billing-sdk/testing)',
    meta: { warmupMs },
    measure: () => runGate({ cwd: benchDir, log, rounds, warmupMs, skip }),
    summarize: summarizeGate,
    render: renderGateMarkdown,
    compact: renderGateCompact,
    failed: (data) => Object.keys(data.failures).length > 0,
  });
}

/** `--invalidation`: from `invalidate` on one instance to every instance seeing the new state, in its own section. */
function mainInvalidation() {
  const invalidationRounds = positiveInt('invalidation-rounds', flags['invalidation-rounds']);
  return runSectionMode({
    name: 'invalidation',
    title: 'Invalidation across instances',
    server: null,
    serverNote:
      'no bench server: the SDK’s mock in this process, redis-server / a Redis Cluster of the run’s own',
    meta: { invalidationRounds },
    measure: () => runInvalidation({ cwd: benchDir, log, rounds: invalidationRounds, skip }),
    summarize: summarizeInvalidation,
    render: renderInvalidationMarkdown,
    compact: renderInvalidationCompact,
    failed: (data) => Object.keys(data.failures).length > 0,
  });
}

/** `--postgres`: billing-sdk/postgres on a cluster of the run's own, in its own section. */
function mainPostgres() {
  return runSectionMode({
    name: 'postgres',
    title: 'Usage and webhooks in PostgreSQL',
    server: null,
    serverNote: "no bench server: the SDK's mock in this process, a PostgreSQL cluster of the run's own",
    meta: { events: eventsN },
    measure: () => runPostgres({ cwd: benchDir, log, events: eventsN, skip }),
    summarize: summarizePostgres,
    render: renderPostgresMarkdown,
    compact: renderPostgresCompact,
    failed: (data) => Object.keys(data.failures).length > 0,
  });
}

/** `--redis`: billing-sdk/redis on one redis-server vs a Redis Cluster, in its own section. */
function mainRedis() {
  const windowMs = positiveInt('redis-window', flags['redis-window']);
  return runSectionMode({
    name: 'redis',
    title: 'Redis: one node vs a cluster',
    server: null,
    serverNote:
      "no bench server: the SDK's mock in this process, a redis-server, a master with a replica and a Redis Cluster of the run's own",
    meta: { windowMs },
    measure: () => runRedis({ cwd: benchDir, log, rounds, windowMs, skip }),
    summarize: summarizeRedis,
    render: renderRedisMarkdown,
    compact: renderRedisCompact,
    failed: (data) => Object.keys(data.failures).length > 0,
  });
}

async function main() {
  if (sectionMode === 'redis') return mainRedis();
  if (sectionMode === 'postgres') return mainPostgres();
  if (sectionMode === 'invalidation') return mainInvalidation();
  if (sectionMode === 'gate') return mainGate();
  if (sectionMode === 'workloads') return mainWorkloads();
  if (sectionMode === 'access') return mainAccess();
  if (sectionMode === 'tracker') return mainTracker();
  ensureBenchDeps();
  ensureBuilt();
  const distAtStart = distFingerprint();
  const meta = {
    date: new Date().toISOString(),
    command,
    rounds,
    warmupMs,
    durationMs,
    coldN,
    machine: machine(),
    node: process.version,
    versions: versions(distAtStart),
    pageBytes: 0,
    dist: distAtStart,
    distChanged: false,
    loadavgEnd: [0, 0, 0],
    totalSeconds: 0,
  };
  const clients = [];
  for (const name of clientNames) {
    const mod = await import(`./clients/${name}.mjs`);
    clients.push({ name, label: mod.label, failed: undefined });
  }

  const server = await startServer();
  meta.pageBytes = server.pageBytes;
  log(`server on 127.0.0.1:${server.port} (separate process), ${server.pageBytes}-byte page`);
  const samples = [];
  let cold = null;
  let memory = null;
  let sizes = null;
  let tarball = null;
  try {
    // Untimed pass: warms the server and proves each client works before minutes are spent on it.
    for (const c of clients) {
      try {
        await sample(c.name, server.port, Math.max(...concurrencies), 200, 300);
      } catch (err) {
        c.failed = String(err.message ?? err);
        log(`${c.name} FAILED, left out: ${c.failed}`);
      }
    }
    if (clients.find((c) => c.name === BASELINE)?.failed)
      throw new Error('raw fetch failed: nothing to compare with');

    for (let round = 0; round < rounds; round++) {
      const active = clients.filter((c) => !c.failed);
      // Rotated by one each round, so no client always runs right after the same neighbour or first.
      const order = active.map((_, i) => active[(i + round) % active.length]);
      for (const concurrency of concurrencies) {
        const line = [];
        for (const c of order) {
          if (c.failed) continue;
          try {
            const s = await sample(c.name, server.port, concurrency, warmupMs, durationMs);
            samples.push({ ...s, round });
            line.push(`${c.name} ${Math.round(s.rps)}`);
          } catch (err) {
            c.failed = String(err.message ?? err);
            log(`${c.name} FAILED in round ${round + 1}, left out from now: ${c.failed}`);
            if (c.name === BASELINE) throw new Error('raw fetch failed: nothing to compare with');
          }
        }
        log(`round ${round + 1}/${rounds} c=${concurrency}: ${line.join(', ')} req/s`);
      }
    }

    if (!skip.has('cold')) {
      cold = await measureColdImports({ n: coldN, cwd: benchDir });
      log(`cold imports done (${coldN} per package)`);
    }
    if (!skip.has('memory')) {
      const sdk = await measureMemory({ port: server.port, cwd: benchDir, walker: 'billing-sdk' });
      const control = await measureMemory({ port: server.port, cwd: benchDir, walker: 'fetch' });
      memory = { sdk, control };
      log('memory walks done');
    }
  } finally {
    await server.stop();
  }
  if (!skip.has('sizes')) {
    // Loaded only now: it pulls in esbuild, which has no business in the parent while clients are timed.
    const { measure } = await import('../scripts/size.mjs');
    sizes = await measure();
    log('bundle sizes done');
    tarball = packedSize();
  }

  meta.loadavgEnd = os.loadavg();
  meta.distChanged = distFingerprint() !== distAtStart;
  if (meta.distChanged)
    log('WARNING: dist/ changed during the run: the SDK was rebuilt while being measured');
  meta.totalSeconds = (performance.now() - started) / 1000;
  const data = { meta, clients, concurrencies, samples, cold, memory, sizes, tarball };
  const summary = summarize(data);
  // The mode sections of the file (written by --workloads, --access, --tracker) are carried over as they are.
  writeFileSync(flags.out, renderMarkdown(data, summary) + extractSections(readOr(flags.out)));
  process.stdout.write(renderCompact(data, summary));
  const shown = relative(process.cwd(), flags.out);
  process.stdout.write(`written ${shown.startsWith('..') ? flags.out : shown}\n`);
  // A client that could not be measured, or a build that changed under the run, is an error of the run;
  // a missed goal is a result, not an error.
  if (clients.some((c) => c.failed) || meta.distChanged) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
  process.exit(1);
});
