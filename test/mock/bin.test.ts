/**
 * `billing-sdk-mock` as a separate process: the built bin (dist/bin/billing-sdk-mock.js, so run
 * `npm run build` first) driven over real HTTP with plain fetch and with the SDK client.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BillingClient } from '../../src/index.js';
import type { StartupInfo } from '../../src/testing/cli/banner.js';
import { DEMO } from '../../src/testing/index.js';
import { VERSION } from '../../src/version.js';
import { obj } from './helpers.js';
import { startReceiver } from './receiver.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = join(root, 'dist');
/**
 * A private copy of dist/, taken once: others may run `npm run build` in this checkout while these
 * tests run, which deletes dist/ for a few seconds. The bin imports chunks shared with
 * `billing-sdk/testing`, hence the whole folder; inside node_modules so that its external imports
 * resolve as from dist/.
 */
const copyDir = join(root, 'node_modules/.cache/billing-sdk-mock-test', String(process.pid));
const BIN = join(copyDir, 'dist/bin/billing-sdk-mock.js');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function run(command: string, args: string[], timeout: number): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(command, args, { cwd: root, timeout }, (error, stdout) =>
      error ? reject(error) : resolvePromise(stdout),
    );
  });
}

/**
 * Copies dist/ once the bin is there (waiting for a concurrent build, or building when it stays
 * missing), and checks that the copy runs; a copy taken in the middle of a rebuild is taken again.
 */
async function prepareBin(): Promise<void> {
  for (let attempt = 0; attempt < 4; attempt++) {
    for (
      let waited = 0;
      waited < 15_000 && !existsSync(join(DIST, 'bin/billing-sdk-mock.js'));
      waited += 250
    ) {
      await sleep(250);
    }
    if (!existsSync(join(DIST, 'bin/billing-sdk-mock.js'))) {
      await run('npm', ['run', 'build', '--silent'], 120_000).catch(() => undefined);
    }
    try {
      rmSync(copyDir, { recursive: true, force: true });
      cpSync(DIST, join(copyDir, 'dist'), { recursive: true });
      if ((await run(process.execPath, [BIN, '--version'], 10_000)).trim() === VERSION) return;
    } catch {
      // dist/ changed under the copy: take it again.
    }
    await sleep(1000);
  }
  throw new Error(`${DIST}/bin/billing-sdk-mock.js is missing or does not run: run npm run build`);
}

const children = new Set<ChildProcess>();

interface Running {
  child: ChildProcess;
  /** Everything written to stdout/stderr so far. */
  out: () => string;
  err: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function spawnBin(args: string[]): Running {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  // 'close', not 'exit': by then stdout and stderr are read to their end, so what a test reads of
  // them after the exit is all the process wrote.
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => {
    child.on('close', (code, signal) => {
      children.delete(child);
      r({ code, signal });
    });
  });
  return { child, out: () => out, err: () => err, exit };
}

/** Resolves with the first line of stdout; rejects if the process exits first or 10 s pass. */
async function firstLine(running: Running): Promise<string> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const out = running.out();
    const end = out.indexOf('\n');
    if (end !== -1) return out.slice(0, end);
    if (running.child.exitCode !== null) break;
    await sleep(20);
  }
  throw new Error(`no start-up line; exit ${running.child.exitCode}, stderr: ${running.err()}`);
}

/** The exit of a process, or a failure after `ms` (the process is then killed). */
async function exited(running: Running, ms = 10_000) {
  const timeout = sleep(ms).then(() => undefined);
  const result = await Promise.race([running.exit, timeout]);
  if (!result) {
    running.child.kill('SIGKILL');
    throw new Error(`did not exit within ${ms} ms`);
  }
  return result;
}

interface Started extends Running {
  info: StartupInfo;
}

async function startBin(args: string[] = []): Promise<Started> {
  const running = spawnBin(['--port', '0', '--json', ...args]);
  const line = await firstLine(running);
  return { ...running, info: JSON.parse(line) as Started['info'] };
}

/** Whether something accepts TCP connections on the URL's port. */
function portOpen(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((r) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      r(true);
    });
    socket.once('error', () => r(false));
  });
}

/** curl-like: a plain fetch with the Bearer key unless `headers` override it. */
async function curl(url: string, apiKey: string, method = 'GET', body?: unknown, headers = {}) {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: text ? (JSON.parse(text) as unknown) : undefined,
  };
}

beforeAll(prepareBin, 150_000);
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(copyDir, { recursive: true, force: true });
  try {
    rmdirSync(dirname(copyDir));
  } catch {
    // Another run's copy is still there.
  }
});

describe('billing-sdk-mock: a running server', () => {
  let mock: Started;
  beforeAll(async () => {
    mock = await startBin();
  });
  afterAll(async () => {
    mock.child.kill('SIGKILL');
    await exited(mock).catch(() => undefined);
  });

  it('prints a line of JSON with the URLs and keys, only once listening', async () => {
    const { info } = mock;
    expect(Object.keys(info).sort()).toEqual([
      'apiKey',
      'appUrl',
      'baseUrl',
      'controlUrl',
      'pid',
      'signingKey',
      'webhookUrl',
    ]);
    expect(info.pid).toBe(mock.child.pid);
    // npx runs the file itself: it must carry its interpreter line.
    expect(readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(info.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/$/);
    expect(new URL(info.baseUrl).port).not.toBe('0');
    expect(info.appUrl).toBe(new URL(info.baseUrl).origin);
    expect(info.controlUrl).toBe(`${info.appUrl}/_mock/`);
    expect(info).toMatchObject({ apiKey: DEMO.apiKey, signingKey: DEMO.signingKey, webhookUrl: null });
    expect(await portOpen(info.baseUrl)).toBe(true);
    expect(mock.err()).toBe('');
  });

  it('control endpoints: 401 without the key, answers with it (Bearer or X-API-Key)', async () => {
    const { controlUrl, apiKey } = mock.info;
    const none = await curl(`${controlUrl}faults`, '', 'GET', undefined, { authorization: '' });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ detail: 'Invalid API key' });
    const wrong = await curl(`${controlUrl}reset`, 'nope', 'POST');
    expect(wrong.status).toBe(401);
    const ok = await curl(`${controlUrl}faults`, '', 'GET', undefined, {
      authorization: '',
      'x-api-key': apiKey,
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ faults: [] });
  });

  it('a fault added over HTTP is seen by the next API call and the request log shows the call', async () => {
    const { controlUrl, baseUrl, apiKey } = mock.info;
    await curl(`${controlUrl}reset`, apiKey, 'POST');
    const added = await curl(`${controlUrl}faults`, apiKey, 'POST', {
      method: 'GET',
      path: '/api/invoices/',
      status: 429,
      headers: { 'retry-after': '7' },
    });
    expect(added.status).toBe(201);
    const hit = await curl(`${baseUrl}invoices/?account_ref_id=${DEMO.accounts.active}`, apiKey);
    expect(hit.status).toBe(429);
    expect(hit.headers.get('retry-after')).toBe('7');
    expect((await curl(`${baseUrl}invoices/?account_ref_id=${DEMO.accounts.active}`, apiKey)).status).toBe(
      200,
    );

    const log = obj((await curl(`${controlUrl}requests?path=/api/invoices/&method=GET`, apiKey)).body);
    const requests = log.requests as Record<string, unknown>[];
    expect(requests).toHaveLength(2);
    expect(requests[0]?.query).toEqual({ account_ref_id: DEMO.accounts.active });
    expect((await curl(`${controlUrl}requests`, apiKey, 'DELETE')).status).toBe(204);
    expect((await curl(`${controlUrl}requests`, apiKey)).body).toEqual({ requests: [] });
  });

  it('a lifecycle event changes the state and posts the webhook to a registered local receiver', async () => {
    const { controlUrl, baseUrl, apiKey } = mock.info;
    const receiver = await startReceiver();
    try {
      await curl(`${controlUrl}reset`, apiKey, 'POST');
      expect(
        (await curl(`${controlUrl}webhooks/receiver`, apiKey, 'PUT', { url: receiver.url })).status,
      ).toBe(200);
      const r = await curl(`${controlUrl}lifecycle/payment-failed`, apiKey, 'POST', {
        account_ref_id: DEMO.accounts.active,
      });
      expect(r.status).toBe(200);
      const delivery = obj(obj(r.body).delivery);
      expect(delivery.delivered).toBe(true);
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0]?.body).toMatchObject({
        event: 'payment-failed',
        account_ref_id: DEMO.accounts.active,
        is_active: false,
      });
      const status = obj((await curl(`${baseUrl}account/${DEMO.accounts.active}/status/`, apiKey)).body);
      expect(status.is_active).toBe(false);
      const log = obj((await curl(`${controlUrl}webhooks/deliveries`, apiKey)).body);
      expect(log.deliveries).toEqual([delivery]);
    } finally {
      await receiver.close();
    }
  });

  it('the SDK client works against it; reset restores the seed', async () => {
    const { controlUrl, baseUrl, apiKey } = mock.info;
    await curl(`${controlUrl}reset`, apiKey, 'POST');
    const billing = new BillingClient({ baseUrl, apiKey });
    let invoices = 0;
    for await (const _ of billing.invoices.list({ account_ref_id: DEMO.accounts.active })) invoices++;
    expect(invoices).toBe(45);

    const debit = {
      account_ref_id: DEMO.accounts.active,
      product_code: 'ai-assistant',
      meter_code: 'credits',
    };
    const first = await billing.usage.debit({ ...debit, quantity: 300 });
    expect(first).toMatchObject({
      approved: true,
      debited: 300,
      remaining_balance: DEMO.initialCredits - 300,
    });
    const second = await billing.usage.debit({ ...debit, quantity: 1 });
    expect(second).toMatchObject({ approved: true, remaining_balance: DEMO.initialCredits - 301 });

    const reset = await curl(`${controlUrl}reset`, apiKey, 'POST');
    expect(reset.status).toBe(204);
    const afterReset = await billing.usage.debit({ ...debit, quantity: 1 });
    expect(afterReset).toMatchObject({ approved: true, remaining_balance: DEMO.initialCredits - 1 });
    expect((await curl(`${controlUrl}faults`, apiKey)).body).toEqual({ faults: [] });
  });
});

describe('billing-sdk-mock: flags', () => {
  it('--seed, --api-key, --signing-key and --webhook-url are applied', async () => {
    const receiver = await startReceiver();
    let mock: Started | undefined;
    try {
      mock = await startBin([
        '--seed',
        'empty',
        '--api-key',
        'key-1',
        '--signing-key',
        'sign-1',
        '--webhook-url',
        receiver.url,
      ]);
      const { baseUrl, controlUrl } = mock.info;
      expect(mock.info).toMatchObject({ apiKey: 'key-1', signingKey: 'sign-1', webhookUrl: receiver.url });
      expect((await curl(`${baseUrl}products/`, DEMO.apiKey)).status).toBe(401);
      expect((await curl(`${controlUrl}faults`, DEMO.apiKey)).status).toBe(401);
      expect((await curl(`${baseUrl}account/${DEMO.accounts.active}/status/`, 'key-1')).status).toBe(404);
      const created = await curl(`${controlUrl}lifecycle/subscription-created`, 'key-1', 'POST', {
        account_ref_id: 'acct_e2e',
      });
      expect(obj(obj(created.body).delivery).delivered).toBe(true);
      expect(receiver.received[0]?.body).toMatchObject({
        event: 'subscription-created',
        account_ref_id: 'acct_e2e',
      });
      expect((await curl(`${controlUrl}webhooks/receiver`, 'key-1')).body).toEqual({ url: receiver.url });
    } finally {
      mock?.child.kill('SIGKILL');
      await receiver.close();
    }
  });

  it('prints human-readable lines without --json', async () => {
    const running = spawnBin(['--port', '0']);
    try {
      await firstLine(running);
      for (let waited = 0; waited < 5000 && !running.out().includes('Ctrl-C'); waited += 20) await sleep(20);
      const out = running.out();
      expect(out).toMatch(
        new RegExp(`^billing-sdk-mock ${VERSION.replaceAll('.', '\\.')} listening \\(seed demo\\)\\n`),
      );
      const api = /API {10}(http:\/\/127\.0\.0\.1:(\d+)\/api\/)\n/.exec(out);
      expect(api).not.toBeNull();
      expect(out).toContain(`control      http://127.0.0.1:${api?.[2]}/_mock/\n`);
      expect(out).toContain(`API key      ${DEMO.apiKey}\n`);
      expect(await portOpen(api?.[1] ?? '')).toBe(true);
    } finally {
      running.child.kill('SIGKILL');
    }
  });

  it('--help prints the usage and exits 0; --version prints the version', async () => {
    const help = spawnBin(['--help']);
    expect(await exited(help)).toEqual({ code: 0, signal: null });
    expect(help.out()).toMatch(/^Usage: billing-sdk-mock \[options\]/);
    expect(help.out()).toContain('--webhook-url <url>');
    const version = spawnBin(['--version']);
    expect(await exited(version)).toEqual({ code: 0, signal: null });
    expect(version.out()).toBe(`${VERSION}\n`);
  });

  it.each([
    [['--bogus'], 'unknown flag "--bogus"'],
    [['--port'], '--port needs a value'],
    [['--port', '99999'], 'bad port "99999": expected an integer from 0 to 65535'],
    [['--seed', 'full'], 'bad seed "full": expected demo or empty'],
    [['--webhook-url', 'not-a-url'], 'bad --webhook-url "not-a-url": expected an absolute http(s) URL'],
  ])('%j exits 2 with one clear line and a usage hint, before listening', async (args, message) => {
    const running = spawnBin(args);
    expect(await exited(running)).toEqual({ code: 2, signal: null });
    expect(running.err()).toBe(`billing-sdk-mock: ${message}\nRun billing-sdk-mock --help for usage.\n`);
    expect(running.out()).toBe('');
  });

  it('an occupied port is a clear message and exit 1', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const { port } = blocker.address() as { port: number };
    try {
      const running = spawnBin(['--port', String(port), '--json']);
      expect(await exited(running)).toEqual({ code: 1, signal: null });
      expect(running.err()).toBe(
        `billing-sdk-mock: port ${port} is already in use on 127.0.0.1 (use another --port, or 0)\n`,
      );
      expect(running.out()).toBe('');
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });
});

describe('billing-sdk-mock: stops cleanly', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'on %s: exit 0, nothing printed over its life but the start-up line, the port closed',
    async (signal) => {
      const mock = await startBin();
      expect(await portOpen(mock.info.baseUrl)).toBe(true);
      expect(mock.child.kill(signal)).toBe(true);
      expect(await exited(mock)).toEqual({ code: 0, signal: null });
      expect(mock.out().split('\n')).toEqual([expect.any(String), '']);
      expect(mock.err()).toBe('');
      expect(await portOpen(mock.info.baseUrl)).toBe(false);
    },
  );

  it('on SIGTERM with a stalled answer and an open keep-alive connection under way', async () => {
    const mock = await startBin();
    const { controlUrl, baseUrl, apiKey } = mock.info;
    await curl(`${controlUrl}faults`, apiKey, 'POST', { path: '/api/products/', stall: 'body' });
    const response = await fetch(`${baseUrl}products/`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(response.status).toBe(200);
    const body = response.text().catch((error: unknown) => error);
    mock.child.kill('SIGTERM');
    expect(await exited(mock, 5000)).toEqual({ code: 0, signal: null });
    expect(await body).toBeInstanceOf(Error);
    expect(await portOpen(baseUrl)).toBe(false);
  });
});
