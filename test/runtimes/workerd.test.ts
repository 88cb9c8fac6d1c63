import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { until } from '../helpers.js';
import {
  collectTracing,
  credits,
  deliverPaymentFailed,
  expectScenario,
  expectSeen,
  expectSubscriberErrorsIsolated,
  expectTracing,
  MOCK_OPTIONS,
  repoRoot,
  requireDist,
  type TracingResults,
  userAgents,
} from './helpers.js';

/**
 * The worker `entry` bundled as wrangler bundles one: a single ESM file, export conditions workerd,
 * worker, browser (in that order of preference) and wrangler's main fields. `billing-sdk` resolves by
 * self-reference through package.json "exports", like a dependency in node_modules would. With
 * `nodejsCompat`, `node:*` imports are left to workerd, as wrangler does under that flag; without it
 * a `node:` import anywhere fails the bundle.
 */
async function bundleWorker(
  entry: string,
  outdir: string,
  nodejsCompat = false,
): Promise<{ scriptPath: string; metafile: Metafile }> {
  const scriptPath = join(outdir, 'worker.js');
  const { metafile } = await build({
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
    outfile: scriptPath,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    external: nodejsCompat ? ['node:*'] : [],
    target: 'es2022',
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: repoRoot,
  });
  return { scriptPath, metafile };
}

/** The modules of the bundle's inputs that import Node built-ins, and what they import. */
function nodeImports(metafile: Metafile): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const [path, input] of Object.entries(metafile.inputs)) {
    const builtins = input.imports.filter((i) => i.external).map((i) => i.path);
    if (builtins.length > 0) found[path] = builtins;
  }
  return found;
}

/** Miniflare and the workerd binary it runs; they are devDependencies, so a missing one is a broken install. */
async function loadMiniflare(): Promise<typeof import('miniflare')> {
  const workerd = `${repoRoot}node_modules/.bin/workerd`;
  if (!existsSync(workerd)) {
    throw new Error(
      `${workerd} is missing: the devDependency "miniflare" (which brings workerd) is not installed`,
    );
  }
  try {
    return await import('miniflare');
  } catch (error) {
    throw new Error(`the devDependency "miniflare" cannot be loaded: ${String(error)}`);
  }
}

/** The compatibility date both workers run with (`process.getBuiltinModule` needs a recent one). */
const COMPATIBILITY_DATE = '2026-04-01';

/**
 * One worker in workerd through Miniflare against a fresh mock, for a describe block: `entry` bundled
 * by {@link bundleWorker}, with the mock's URL and keys as bindings, and `nodejs_compat` when asked.
 * `call` answers a worker path's JSON body, failing with workerd's output on an unexpected status.
 */
function useWorker(entry: string, { nodejsCompat = false } = {}) {
  const state = {
    mock: undefined as unknown as MockServer,
    workerUrl: undefined as unknown as URL,
    metafile: undefined as unknown as Metafile,
    creditsBefore: 0,
    output: '',
    /** A worker answer's body as JSON; on an unexpected status, fails with the body and workerd's output. */
    async call(path: string): Promise<unknown> {
      let status: number;
      let text: string;
      try {
        // Shorter than the test's timeout, so a hung worker fails here, with workerd's output.
        const response = await fetch(new URL(path, state.workerUrl), { signal: AbortSignal.timeout(10_000) });
        status = response.status;
        text = await response.text();
      } catch (error) {
        throw new Error(`${path}: ${String(error)}\n--- workerd output ---\n${state.output}`);
      }
      expect(status, `${path}: ${text}\n--- workerd output ---\n${state.output}`).toBe(200);
      return JSON.parse(text);
    },
  };
  let mf: Miniflare | undefined;
  let outdir: string | undefined;

  beforeAll(async () => {
    requireDist('dist/browser/index.js');
    const { Miniflare, Log, LogLevel } = await loadMiniflare();
    outdir = await mkdtemp(join(tmpdir(), 'billing-sdk-workerd-'));
    const bundle = await bundleWorker(entry, outdir, nodejsCompat);
    state.metafile = bundle.metafile;
    state.mock = await startMockServer(MOCK_OPTIONS);
    state.creditsBefore = credits(state.mock);
    mf = new Miniflare({
      modules: true,
      scriptPath: bundle.scriptPath,
      // Module names are paths relative to this root; the bundle lives outside the repo.
      modulesRoot: outdir,
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: nodejsCompat ? ['nodejs_compat'] : [],
      bindings: {
        BILLING_API_URL: state.mock.baseUrl,
        BILLING_API_KEY: state.mock.apiKey,
        SIGNING_KEY: state.mock.signingKey,
        APP_URL: state.mock.appUrl,
      },
      host: '127.0.0.1',
      port: 0,
      // No request for Cloudflare's request.cf data over the internet: tests run offline.
      cf: false,
      log: new Log(LogLevel.WARN),
      // workerd's own stdout and stderr (the worker's console, uncaught errors) for failure messages.
      handleRuntimeStdio(stdout: Readable, stderr: Readable) {
        stdout.setEncoding('utf8').on('data', (chunk: string) => (state.output += chunk));
        stderr.setEncoding('utf8').on('data', (chunk: string) => (state.output += chunk));
      },
    });
    try {
      state.workerUrl = await mf.ready;
    } catch (error) {
      throw new Error(`workerd did not start: ${String(error)}\n--- workerd output ---\n${state.output}`);
    }
  }, 20_000);

  afterAll(async () => {
    try {
      await mf?.dispose();
    } finally {
      // Also when dispose rejects (workerd failed to start): no mock or bundle outlives the file.
      await state.mock?.close();
      if (outdir) await rm(outdir, { recursive: true, force: true });
    }
  });

  return state;
}

/** The bundle holds the browser/worker build, not the server build. */
function expectWorkerBuild(metafile: Metafile): void {
  const inputs = Object.keys(metafile.inputs);
  expect(inputs).toContain('dist/browser/index.js');
  expect(inputs).toContain('dist/browser/client.js');
  expect(inputs.filter((path) => /^dist\/[^/]+\.js$/.test(path))).toEqual([]);
}

describe('on Cloudflare workerd (Miniflare)', () => {
  const worker = useWorker('worker.mjs');

  it('bundles the browser/worker build, not the server build', () => {
    // A `node:` import anywhere (the SDK's included) would have failed this bundle.
    expectWorkerBuild(worker.metafile);
  });

  it('walks invoice pages, reads status, debits, settles a credit hold and signs links, fetching the mock on 127.0.0.1', async () => {
    // Miniflare's outbound network allows private and loopback addresses (workerd alone allows
    // only public ones), so the worker's fetch reaches the mock directly over real HTTP.
    const results = (await worker.call('/scenario')) as Record<string, unknown>;
    await expectScenario(results, worker.mock, worker.creditsBefore);
    // The browser/worker build sets no user agent; the server build would name its runtime.
    expect(userAgents(worker.mock).filter((agent) => agent.startsWith('billing-sdk/'))).toEqual([]);
  }, 15_000);

  it("receives the mock's webhook in the worker's fetch handler", async () => {
    const url = new URL('/webhooks/billing', worker.workerUrl).href;
    const delivery = await deliverPaymentFailed(worker.mock, url);
    expectSeen(((await worker.call('/events')) as unknown[])[0], delivery);
    expect(await worker.call('/events')).toHaveLength(1);
  }, 15_000);
});

describe('on Cloudflare workerd with nodejs_compat (Miniflare)', () => {
  const worker = useWorker('tracing-worker.mjs', { nodejsCompat: true });
  let tracing: Promise<TracingResults> | undefined;
  /** tracing.mjs's results, run once in the worker. */
  const traced = (): Promise<TracingResults> =>
    (tracing ??= collectTracing(worker.mock, () => worker.call('/tracing')));

  it('bundles the browser/worker build, which imports no Node built-in (only the test does)', () => {
    expectWorkerBuild(worker.metafile);
    // The SDK gets node:diagnostics_channel from process.getBuiltinModule at run time, never by import.
    expect(nodeImports(worker.metafile)).toEqual({
      'test/runtimes/tracing.mjs': ['node:diagnostics_channel', 'node:process'],
    });
  });

  it('publishes on billing-sdk:request, :attempt, :access and :tracker, from node:diagnostics_channel', async () => {
    expectTracing(await traced(), worker.mock);
  }, 15_000);

  // workerd's Channel.publish throws a subscriber's error back at the publisher (Node, Deno and Bun
  // report it as uncaught instead): the SDK guards every publish, so the call's result stands and
  // nothing is reported.
  it('keeps every result when a subscriber throws on any event of any channel, and reports nothing', async () => {
    const { throwing } = await traced();
    expectSubscriberErrorsIsolated(throwing, { reported: false });
  }, 15_000);
});

describe('on Cloudflare workerd: usage through ctx.waitUntil (Miniflare)', () => {
  const worker = useWorker('waituntil-worker.mjs');
  const EVENTS = '/api/usage/events/';
  /** Usage events the mock recorded for the worker's account. */
  const recorded = () =>
    worker.mock.store.usageEvents.filter((e) => e.account_ref_id === 'acct_active').length;
  /** `n` requests to the gated route at once; their answers, read. */
  const requests = async (n: number) => {
    const answers = await Promise.all(
      Array.from({ length: n }, () =>
        fetch(new URL('/usage', worker.workerUrl), {
          headers: { 'x-account': 'acct_active' },
          signal: AbortSignal.timeout(10_000),
        }),
      ),
    );
    return {
      statuses: answers.map((a) => a.status),
      bodies: await Promise.all(answers.map((a) => a.text())),
    };
  };

  it('a route gated with gate.protect answers before its usage is sent; every event reaches the mock through ctx.waitUntil', async () => {
    const before = recorded();
    const posts = () => worker.mock.requests.count({ method: 'POST', path: EVENTS });
    const postsBefore = posts();
    // The service is slow: an answer that waited for the usage would take 1 s at least.
    worker.mock.faults.add({ method: 'POST', path: EVENTS, delayMs: 1_000, times: Number.POSITIVE_INFINITY });
    try {
      const first = await requests(5);
      // Every answer is in while no usage has been recorded yet: none waited for its send.
      expect(recorded(), worker.output).toBe(before);
      expect(first.statuses, first.bodies.join('\n')).toEqual([200, 200, 200, 200, 200]);
      // No request keeps the isolate now: only the waitUntil promises do.
      await until(() => recorded() === before + 5, 10_000);
      // Later requests, once the first are over, as well.
      const second = await requests(3);
      expect(second.statuses).toEqual([200, 200, 200]);
      await until(() => recorded() === before + 8, 10_000);
      expect(posts() - postsBefore, 'one request per event, none cancelled and sent again').toBe(8);
    } finally {
      worker.mock.faults.clear();
    }
  }, 30_000);
});

describe('on Cloudflare workerd: a module-scope client, tracker and gate (Miniflare)', () => {
  const worker = useWorker('module-scope-worker.mjs');
  const EVENTS = '/api/usage/events/';
  /** Keys of the usage events the mock recorded for `account`. */
  const keys = (account: string) =>
    worker.mock.store.usageEvents.filter((e) => e.account_ref_id === account).map((e) => e.event_key);
  /** `n` requests to `path` one after the other (each over before the next), as `account`. */
  const serial = async (path: string, account: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const response = await fetch(new URL(path, worker.workerUrl), {
        headers: { 'x-account': account },
        signal: AbortSignal.timeout(10_000),
      });
      const body = await response.text();
      expect(response.status, `${body}\n${worker.output}`).toBe(200);
    }
  };
  /** Waits until `account` has `n` more events than `before`, failing with workerd's output. */
  const recorded = async (account: string, before: string[], n: number) => {
    await until(() => keys(account).length >= before.length + n, 10_000).catch(() => {
      throw new Error(`${keys(account).length - before.length} of ${n} recorded\n${worker.output}`);
    });
  };

  it("every request's usage reaches the mock once: gate.protect and tracker.track, 3 requests each, then 3 more", async () => {
    const posts = () => worker.mock.requests.count({ method: 'POST', path: EVENTS });
    const postsBefore = posts();
    const gated = keys('acct_active');
    const tracked = keys('acct_multi');
    await serial('/gated', 'acct_active', 3);
    await recorded('acct_active', gated, 3);
    await serial('/track', 'acct_multi', 3);
    await recorded('acct_multi', tracked, 3);
    // More requests, once the first ones (and their waitUntil promises) are over.
    await serial('/gated', 'acct_active', 3);
    await serial('/track', 'acct_multi', 3);
    await recorded('acct_active', gated, 6);
    await recorded('acct_multi', tracked, 6);
    const fresh = [...keys('acct_active'), ...keys('acct_multi')].filter(
      (k) => !gated.includes(k) && !tracked.includes(k),
    );
    expect(fresh.length, 'each event recorded once').toBe(12);
    expect(new Set(fresh).size, 'no event recorded twice').toBe(12);
    expect(posts() - postsBefore, 'one request per event').toBe(12);
  }, 60_000);
});
