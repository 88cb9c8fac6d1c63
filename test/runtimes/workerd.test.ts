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
import {
  credits,
  deliverPaymentFailed,
  expectScenario,
  expectSeen,
  MOCK_OPTIONS,
  repoRoot,
  requireDist,
  userAgents,
} from './helpers.js';

/**
 * The worker bundled as wrangler bundles one: a single ESM file, export conditions workerd, worker,
 * browser (in that order of preference) and wrangler's main fields. `billing-sdk` resolves by
 * self-reference through package.json "exports", like a dependency in node_modules would.
 */
async function bundleWorker(outdir: string): Promise<{ scriptPath: string; metafile: Metafile }> {
  const scriptPath = join(outdir, 'worker.js');
  const { metafile } = await build({
    entryPoints: [fileURLToPath(new URL('worker.mjs', import.meta.url))],
    outfile: scriptPath,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    target: 'es2022',
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: repoRoot,
  });
  return { scriptPath, metafile };
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

describe('on Cloudflare workerd (Miniflare)', () => {
  let mock: MockServer;
  let mf: Miniflare;
  let workerUrl: URL;
  let metafile: Metafile;
  let outdir: string;
  let creditsBefore: number;
  let workerOutput = '';

  /** A worker answer's body as JSON; on an unexpected status, fails with the body and workerd's output. */
  async function call(path: string): Promise<unknown> {
    let status: number;
    let text: string;
    try {
      // Shorter than the test's timeout, so a hung worker fails here, with workerd's output.
      const response = await fetch(new URL(path, workerUrl), { signal: AbortSignal.timeout(10_000) });
      status = response.status;
      text = await response.text();
    } catch (error) {
      throw new Error(`${path}: ${String(error)}\n--- workerd output ---\n${workerOutput}`);
    }
    expect(status, `${path}: ${text}\n--- workerd output ---\n${workerOutput}`).toBe(200);
    return JSON.parse(text);
  }

  beforeAll(async () => {
    requireDist('dist/browser/index.js');
    const { Miniflare, Log, LogLevel } = await loadMiniflare();
    outdir = await mkdtemp(join(tmpdir(), 'billing-sdk-workerd-'));
    const bundle = await bundleWorker(outdir);
    metafile = bundle.metafile;
    mock = await startMockServer(MOCK_OPTIONS);
    creditsBefore = credits(mock);
    mf = new Miniflare({
      modules: true,
      scriptPath: bundle.scriptPath,
      // Module names are paths relative to this root; the bundle lives outside the repo.
      modulesRoot: outdir,
      compatibilityDate: '2026-04-01',
      bindings: {
        BILLING_API_URL: mock.baseUrl,
        BILLING_API_KEY: mock.apiKey,
        SIGNING_KEY: mock.signingKey,
        APP_URL: mock.appUrl,
      },
      host: '127.0.0.1',
      port: 0,
      // No request for Cloudflare's request.cf data over the internet: tests run offline.
      cf: false,
      log: new Log(LogLevel.WARN),
      // workerd's own stdout and stderr (the worker's console, uncaught errors) for failure messages.
      handleRuntimeStdio(stdout: Readable, stderr: Readable) {
        stdout.setEncoding('utf8').on('data', (chunk: string) => (workerOutput += chunk));
        stderr.setEncoding('utf8').on('data', (chunk: string) => (workerOutput += chunk));
      },
    });
    try {
      workerUrl = await mf.ready;
    } catch (error) {
      throw new Error(`workerd did not start: ${String(error)}\n--- workerd output ---\n${workerOutput}`);
    }
  }, 20_000);

  afterAll(async () => {
    try {
      await mf?.dispose();
    } finally {
      // Also when dispose rejects (workerd failed to start): no mock or bundle outlives the file.
      await mock?.close();
      if (outdir) await rm(outdir, { recursive: true, force: true });
    }
  });

  it('bundles the browser/worker build, not the server build', () => {
    const inputs = Object.keys(metafile.inputs);
    expect(inputs).toContain('dist/browser/index.js');
    expect(inputs).toContain('dist/browser/client.js');
    expect(inputs.filter((path) => /^dist\/[^/]+\.js$/.test(path))).toEqual([]);
  });

  it('walks invoice pages, reads status, debits and signs links, fetching the mock on 127.0.0.1', async () => {
    // Miniflare's outbound network allows private and loopback addresses (workerd alone allows
    // only public ones), so the worker's fetch reaches the mock directly over real HTTP.
    const results = (await call('/scenario')) as Record<string, unknown>;
    await expectScenario(results, mock, creditsBefore);
    // The browser/worker build sets no user agent; the server build would name its runtime.
    expect(userAgents(mock).filter((agent) => agent.startsWith('billing-sdk/'))).toEqual([]);
  }, 15_000);

  it("receives the mock's webhook in the worker's fetch handler", async () => {
    const url = new URL('/webhooks/billing', workerUrl).href;
    const delivery = await deliverPaymentFailed(mock, url);
    expectSeen(((await call('/events')) as unknown[])[0], delivery);
    expect(await call('/events')).toHaveLength(1);
  }, 15_000);
});
