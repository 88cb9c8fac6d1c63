// What several scenarios share: one percentile, tinybench with the figures in µs,
// a scenario run in a fresh `node` child and its result, and the billing client every scenario makes.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The q-quantile (0..1) of an ascending array, nearest rank. */
export function quantile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** The median of numbers in any order. */
export const median = (xs) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

/** A goal's line: what, the figure, the goal, and whether it holds (null: reported, no goal set). */
export const goal = (name, figure, target, pass) => ({ name, figure, goal: target, pass });

/** `x` rounded for a report: 3 significant digits. */
export const r3 = (x) => Number(x.toPrecision(3));

/**
 * Runs tinybench over `tasks` ({ name: async fn }) one after the other in one run; returns per task
 * the mean, p50 and p99 of one call in µs, the calls per second (wall: calls ÷ the measured window,
 * with `concurrency` calls in flight at once), this process's CPU per call in µs, and the calls timed.
 * Keyed by task name, whatever the order they ran in.
 */
export async function timeTasks(tasks, { time = 1000, warmupTime = 300, concurrency = 1, rotate = 0 } = {}) {
  // In flight, tinybench stops at `iterations` even before `time` is up: 0 lets the time alone decide.
  const inFlight =
    concurrency > 1
      ? { concurrency: 'task', threshold: concurrency, iterations: 0, warmupIterations: 0 }
      : {};
  const bench = new Bench({ time, warmupTime, throws: true, ...inFlight });
  const windows = {};
  const entries = Object.entries(tasks);
  // Rotated by `rotate`: over rounds, no task always runs first (JIT and GC state favour the later ones).
  const order = entries.map((_, i) => entries[(i + rotate) % entries.length]);
  for (const [name, task] of order) {
    // A task is a function, or { fn, on, off }: `on` before its warm-up and its run, `off` (awaited,
    // untimed) after each, e.g. to flush what a task left queued. tinybench warms every task up
    // before it runs the first.
    const { fn, on, off } = typeof task === 'function' ? { fn: task } : task;
    bench.add(name, fn, {
      beforeAll(mode) {
        on?.();
        if (mode === 'run') windows[name] = { cpu: process.cpuUsage(), t0: performance.now() };
      },
      async afterAll(mode) {
        if (mode === 'run') {
          const w = windows[name];
          const cpu = process.cpuUsage(w.cpu);
          Object.assign(w, { cpuUs: cpu.user + cpu.system, ms: performance.now() - w.t0 });
        }
        await off?.();
      },
    });
  }
  await bench.run();
  const out = {};
  for (const task of bench.tasks) {
    const { latency } = task.result;
    const w = windows[task.name];
    out[task.name] = {
      mean: r3(latency.mean * 1000),
      p50: r3(latency.p50 * 1000),
      p99: r3(latency.p99 * 1000),
      hz: Math.round((latency.samplesCount * 1000) / w.ms),
      cpu: r3(w.cpuUs / latency.samplesCount),
      samples: latency.samplesCount,
    };
  }
  return out;
}

/**
 * Runs `node [execArgv] <file> <json of args>` and resolves to the object its child printed on its
 * last `RESULT ` line (see {@link childMain}); rejects with its stderr when it printed none.
 */
export function inChild(file, args, { execArgv = [], timeoutMs = 300_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...execArgv, fileURLToPath(file), JSON.stringify(args)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s) => {
      out += s;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = out.split('\n').findLast((l) => l.startsWith('RESULT '));
      if (line) resolve(JSON.parse(line.slice(7)));
      else reject(new Error(`${fileURLToPath(file)} exited ${code} without a result`));
    });
  });
}

/** The main of a child: runs `fn(args)`, prints its result on one `RESULT ` line and exits at once. */
export async function childMain(fn) {
  try {
    const result = await fn(JSON.parse(process.argv[2] ?? '{}'));
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`, () => process.exit(0));
  } catch (error) {
    console.error(error);
    process.exit(1);
  }
}

/** True when `meta` is the module node was started with (a scenario file run as a child). */
export const isMain = (meta) => process.argv[1] === fileURLToPath(meta.url);

/** A BillingClient on `baseUrl` with the SDK's defaults but `options`. */
export async function billingClient(baseUrl, apiKey, options = {}) {
  const { BillingClient } = await import('billing-sdk');
  return new BillingClient({ apiKey, baseUrl, ...options });
}

/** The SDK's mock (demo data) on a loopback port, in this process, plus `accounts` active accounts `acct_0`…. */
export async function startMock({ accounts = 0, ...options } = {}) {
  const { startMockServer } = await import('billing-sdk/testing');
  const mock = await startMockServer({ host: '127.0.0.1', ...options });
  for (let i = 0; i < accounts; i++) await mock.lifecycle.subscribe({ account_ref_id: `acct_${i}` });
  return mock;
}
