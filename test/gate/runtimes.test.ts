import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Metafile } from 'esbuild';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { MOCK_OPTIONS, RuntimeProcess, requireDist, runtimeBinary } from '../runtimes/helpers.js';
import { APP_NAME, bundleWorker, expectGatedRoute, loadMiniflare } from './runtimes-helpers.js';

// `gate.protect` around a Fetch handler, in each runtime that serves one, loading the built package
// the way a user's code does (by its name, through package.json "exports"): the server build on
// Deno and Bun, the browser/worker build in workerd.

/** The mock's URL and keys, as gate-serve.mjs's one command-line argument. */
function serveConfig(mock: MockServer): string {
  const { baseUrl, apiKey, signingKey } = mock;
  return JSON.stringify({ baseUrl, apiKey, signingKey, appName: APP_NAME });
}

const RUNTIMES = {
  // Module loading needs no --allow-read and nothing reads the environment: loopback networking is
  // the one permission (the mock, Deno.serve), as in test/runtimes/deno.test.ts.
  deno: (config: string) => [
    'run',
    '--no-prompt',
    '--no-lock',
    '--node-modules-dir=manual',
    '--allow-net=127.0.0.1',
    'test/gate/fixtures/gate-serve.mjs',
    config,
  ],
  // --no-install: node_modules is there; Bun must never fetch packages of its own during a test.
  bun: (config: string) => ['--no-install', 'test/gate/fixtures/gate-serve.mjs', config],
} as const;

describe.each(Object.entries(RUNTIMES))('gate.protect on %s', (pkg, args) => {
  let mock: MockServer;
  let runtime: RuntimeProcess;

  beforeAll(async () => {
    const binary = runtimeBinary(pkg as keyof typeof RUNTIMES);
    requireDist('dist/index.js');
    mock = await startMockServer(MOCK_OPTIONS);
    runtime = new RuntimeProcess(pkg, binary, args(serveConfig(mock)));
  });

  afterAll(async () => {
    await runtime?.stop();
    await mock?.close();
  });

  it('lets an active account through and answers an inactive one 402 (API) or 303 to the paywall (browser)', async () => {
    const { url } = await runtime.next('listening');
    await expectGatedRoute(url as string, mock, APP_NAME, () => runtime.describe());
    // Closing stdin stops the server; exit code 0: nothing failed or hung on the way out (the cache closed).
    expect(await runtime.stop(), runtime.describe()).toBe(0);
  }, 20_000);
});

describe('gate.protect on Cloudflare workerd (Miniflare)', () => {
  let mock: MockServer;
  let mf: Miniflare | undefined;
  let outdir: string | undefined;
  let metafile: Metafile;
  let workerUrl: URL;
  let output = '';

  beforeAll(async () => {
    requireDist('dist/browser/index.js');
    const { Miniflare, Log, LogLevel } = await loadMiniflare();
    outdir = await mkdtemp(join(tmpdir(), 'billing-sdk-gate-workerd-'));
    const scriptPath = join(outdir, 'worker.js');
    metafile = await bundleWorker('fixtures/gate-worker.mjs', scriptPath);
    mock = await startMockServer(MOCK_OPTIONS);
    mf = new Miniflare({
      modules: true,
      scriptPath,
      modulesRoot: outdir,
      compatibilityDate: '2026-04-01',
      bindings: {
        BILLING_API_URL: mock.baseUrl,
        BILLING_API_KEY: mock.apiKey,
        SIGNING_KEY: mock.signingKey,
        APP_NAME,
      },
      host: '127.0.0.1',
      port: 0,
      // No request for Cloudflare's request.cf data over the internet: tests run offline.
      cf: false,
      log: new Log(LogLevel.WARN),
      handleRuntimeStdio(stdout: Readable, stderr: Readable) {
        stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
        stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      },
    });
    try {
      workerUrl = await mf.ready;
    } catch (error) {
      throw new Error(`workerd did not start: ${String(error)}\n--- workerd output ---\n${output}`);
    }
  }, 30_000);

  afterAll(async () => {
    try {
      await mf?.dispose();
    } finally {
      await mock?.close();
      if (outdir) await rm(outdir, { recursive: true, force: true });
    }
  });

  it('bundles the gate from the browser/worker build, with no Node built-in', () => {
    const inputs = Object.keys(metafile.inputs);
    expect(inputs).toContain('dist/browser/index.js');
    expect(inputs.filter((path) => /^dist\/[^/]+\.js$/.test(path))).toEqual([]);
  });

  it('lets an active account through and answers an inactive one 402 (API) or 303 to the paywall (browser)', async () => {
    // Miniflare's outbound network allows loopback, so the worker's fetch reaches the mock over real HTTP.
    await expectGatedRoute(workerUrl.href, mock, APP_NAME, () => `--- workerd output ---\n${output}`);
  }, 20_000);
});
