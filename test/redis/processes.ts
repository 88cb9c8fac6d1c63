import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { killOnExit } from '../../scripts/servers.mjs';
import { type MockServer, startMockServer } from '../../src/testing/index.js';

/**
 * Bundles a child entry (test/redis/*-process.ts) with the SDK's sources into one .mjs in a temp
 * dir, rather than importing dist/, which other work may be rebuilding meanwhile. Returns its path
 * and a cleanup.
 */
export async function buildChild(entry: string): Promise<{ file: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-redis-'));
  const file = join(dir, 'child.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    // The Node builds ship classic zod in place of zod/mini, as vitest.config.ts and tsup do.
    alias: { 'zod/mini': 'zod' },
    // node-redis is CommonJS: its require() of Node built-ins needs a real require in an ES module.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
  });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A line a child printed: one JSON object per line. */
export type Message = Record<string, unknown> & { type: string };

/** A child process speaking JSON lines on stdout. */
export interface Child {
  messages: Message[];
  /** Resolves with the first message (already printed or to come) that `match` accepts. */
  next(match: (message: Message) => boolean, ms?: number): Promise<Message>;
  send(line: string): void;
  kill(signal?: NodeJS.Signals): Promise<void>;
  process: ChildProcess;
}

/** Starts `node file` with `env` added; its stderr is kept for the error of a failed `next`. */
export function spawnChild(file: string, env: Record<string, string>): Child {
  // However the test worker ends, no child outlives it.
  const child = killOnExit(
    spawn(process.execPath, [file], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  const messages: Message[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.startsWith('{')) messages.push(JSON.parse(line) as Message);
      newline = buffer.indexOf('\n');
    }
    for (const wake of waiters) wake();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.once('exit', () => {
    for (const wake of waiters) wake();
  });
  return {
    messages,
    process: child,
    next(match, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(match);
          if (found) {
            done();
            resolve(found);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            done();
            reject(new Error(`child exited (${child.exitCode ?? child.signalCode}) first:\n${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no matching message within ${ms} ms:\n${JSON.stringify(messages)}\n${stderr}`));
        }, ms);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    send(line) {
      child.stdin?.write(`${line}\n`);
    },
    kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill(signal);
      return exited;
    },
  };
}

let ids = 0;
/** Sends a command (`{ cmd, …, id }`) and resolves with the child's answer to it (`{ type: answer, id }`). */
export function ask(
  c: Child,
  command: Record<string, unknown>,
  answer: string,
  ms = 15_000,
): Promise<Message> {
  const id = ++ids;
  c.send(JSON.stringify({ ...command, id }));
  return c.next((m) => m.type === answer && m.id === id, ms);
}

/** Children of one entry, talking to the SDK's mock. */
export interface Fleet {
  /** The SDK's mock, started before the first test. */
  readonly mock: MockServer;
  /** Starts a child of the entry with `env` (and the mock's URL and key) added. */
  spawn(env: Record<string, string>): Child;
  /** Starts `count` children with the same `env`, as {@link spawn} does; resolves once each printed `ready`. */
  start(count: number, env: Record<string, string>, readyMs?: number): Promise<Child[]>;
}

/**
 * For the file: the entry bundled and the mock started before the first test (within `setupMs`),
 * every child it started killed after each test, the bundle and mock gone after the last.
 */
export function useFleet(entry: string, setupMs?: number): Fleet {
  let bundle: { file: string; remove(): void } | undefined;
  let mock: MockServer | undefined;
  let running: Child[] = [];
  beforeAll(async () => {
    // `entry` is relative to this file, as buildChild wants it.
    [bundle, mock] = await Promise.all([buildChild(entry), startMockServer()]);
  }, setupMs);
  afterEach(async () => {
    await Promise.all(running.map((c) => c.kill()));
    running = [];
  });
  afterAll(async () => {
    bundle?.remove();
    await mock?.close();
  });
  return {
    get mock() {
      if (!mock) throw new Error('useFleet: the mock starts in beforeAll');
      return mock;
    },
    spawn(env) {
      if (!bundle) throw new Error('useFleet: the entry is bundled in beforeAll');
      const child = spawnChild(bundle.file, {
        ...env,
        BASE_URL: this.mock.baseUrl,
        API_KEY: this.mock.apiKey,
      });
      running.push(child);
      return child;
    },
    async start(count, env, readyMs = 20_000) {
      const children = Array.from({ length: count }, () => this.spawn(env));
      await Promise.all(children.map((c) => c.next((m) => m.type === 'ready', readyMs)));
      return children;
    },
  };
}

/** The mock's path of an account's status, which access lookups ask. */
export const statusPath = (account: string): string => `/api/account/${account}/status/`;

/**
 * Access children (access-process.ts) doing `n` concurrent cold lookups each of `account`, whose
 * answer the mock delays 300 ms: the other processes' lookups arrive while the one request is out,
 * so they wait on the lease rather than find the answer already stored. Asserts every lookup said
 * active, no store call failed (a process told of one asks the service on its own), and exactly one
 * request reached the service.
 */
export async function expectOneColdRequest(children: Child[], mock: MockServer, account: string, n = 250) {
  await mock.lifecycle.subscribe({ account_ref_id: account });
  mock.requests.clear();
  mock.faults.add({ path: statusPath(account), delayMs: 300 });
  const looked = await Promise.all(children.map((c) => ask(c, { cmd: 'lookup', account, n }, 'looked')));
  for (const l of looked) expect(l).toMatchObject({ values: [true], errors: [], storeErrors: [] });
  expect(mock.requests.count({ path: statusPath(account) })).toBe(1);
  expect(mock.requests.count()).toBe(1);
}

/**
 * `invalidator` invalidates `account`; resolves with its answer and, once each of the `others` was
 * told (a `told` message for the account printed after this call began), their messages.
 */
export async function invalidateAndTell(
  invalidator: Child,
  others: Child[],
  account: string,
): Promise<{ answer: Message; told: Message[] }> {
  const marks = others.map((c) => c.messages.length);
  const answer = await ask(invalidator, { cmd: 'invalidate', account }, 'invalidated');
  const told = await Promise.all(
    others.map((c, i) =>
      c.next((m) => m.type === 'told' && m.account === account && c.messages.indexOf(m) >= marks[i]!, 5_000),
    ),
  );
  return { answer, told };
}

/** Polls `condition` every 10 ms; rejects after `ms` with `what` and `detail()`. */
export async function waitUntil(
  what: string,
  condition: () => Promise<boolean> | boolean,
  detail: () => unknown = () => '',
  ms = 30_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what} ${JSON.stringify(detail())}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The mock's path of usage events, which trackers POST to. */
export const EVENTS_PATH = '/api/usage/events/';

/**
 * The mock reset, with each POST of events taking 20 ms (so sends lag behind and entries wait in
 * the spool) and, with `dropAnswers`, 10% of its answers dropped after it recorded the event.
 */
export function slowEventPosts(mock: MockServer, dropAnswers = false): void {
  mock.reset();
  const post = { method: 'POST', path: EVENTS_PATH, times: Number.POSITIVE_INFINITY } as const;
  if (dropAnswers) mock.faults.add({ ...post, reset: 'after', probability: 0.1 });
  mock.faults.add({ ...post, delayMs: 20 });
}

/** Tracker children told to close: each answers `closed` with nothing unsent; no child printed a dead letter or a failure. */
export async function expectClosedClean(closing: Child[], all: Child[]): Promise<void> {
  for (const c of closing) c.send('close');
  const closed = await Promise.all(closing.map((c) => c.next((m) => m.type === 'closed', 30_000)));
  for (const m of closed) expect(m.unsent).toBe(0);
  for (const c of all)
    expect(c.messages.filter((m) => m.type === 'dead-letter' || m.type === 'failed')).toEqual([]);
}
