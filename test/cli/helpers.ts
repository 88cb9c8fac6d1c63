// What the tests of the `billing-sdk` bin share: the bin bundled from src/cli/bin.ts (as the child
// processes of test/redis are, so a concurrent `npm run build` cannot pull dist/ from under it),
// run as a process, and the spools it is pointed at, seeded from the test.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { killOnExit } from '../../scripts/servers.mjs';
import { fileSpool } from '../../src/node/index.js';
import { postgresSpool } from '../../src/postgres/index.js';
import { redisSpool } from '../../src/redis/index.js';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import type { Spool, SpooledEvent } from '../../src/tracker/spool.js';
import { buildChild } from '../redis/processes.js';

/** The bin, bundled once for the file, and the mock it sends to. */
export function useCli(): { readonly bin: string; readonly mock: MockServer } {
  const ref = {} as { bin: string; mock: MockServer };
  let remove: (() => void) | undefined;
  beforeAll(async () => {
    const [bundle, mock] = await Promise.all([buildChild('../../src/cli/bin.ts'), startMockServer()]);
    ref.bin = bundle.file;
    remove = bundle.remove;
    ref.mock = mock;
  }, 60_000);
  afterAll(async () => {
    remove?.();
    await ref.mock?.close();
  });
  return ref;
}

/** A run of the bin: its exit code, what it printed, and its JSON lines. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The lines of stdout that are JSON objects. */
  json: Record<string, unknown>[];
}

/** A bin process under way. */
export interface Running {
  process: ChildProcess;
  /** Settles once it exited. */
  exited: Promise<Run>;
  /** Resolves once a JSON line matches (rejects if it exits first). */
  line(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

/** Starts the bin with `args`, the mock's URL and key in its environment unless `env` overrides them. */
export function start(
  cli: { bin: string; mock: MockServer },
  args: string[],
  env: Record<string, string | undefined> = {},
): Running {
  const child = killOnExit(
    spawn(process.execPath, [cli.bin, ...args], {
      env: {
        ...process.env,
        BILLING_API_KEY: cli.mock.apiKey,
        BILLING_BASE_URL: cli.mock.baseUrl,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  const json = (): Record<string, unknown>[] =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const wake of waiters) wake();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<Run>((resolve) => {
    child.once('close', (code) => {
      for (const wake of waiters) wake();
      resolve({ code, stdout, stderr, json: json() });
    });
  });
  return {
    process: child,
    exited,
    line: (match) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = json().find(match);
          if (found) {
            waiters.delete(check);
            resolve(found);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            waiters.delete(check);
            reject(
              new Error(
                `the bin exited (${child.exitCode ?? child.signalCode}) first:\n${stdout}\n${stderr}`,
              ),
            );
          }
        };
        waiters.add(check);
        check();
      }),
  };
}

/** Runs the bin to its end. */
export const run = (
  cli: { bin: string; mock: MockServer },
  args: string[],
  env?: Record<string, string | undefined>,
): Promise<Run> => start(cli, args, env).exited;

/** `n` valid events of the mock's demo data, each with a key of its own. */
export const events = (n: number, prefix = randomUUID()): SpooledEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    account_ref_id: 'acct_active',
    product_code: 'api-gateway',
    meter_code: 'api_calls',
    quantity: 1,
    event_key: `${prefix}-${i}`,
  }));

/** A durable spool the bin is pointed at by `flags`; the test seeds it through `spool()`. */
export interface Backend {
  flags: string[];
  /** A spool on the same place, for the test's own appends and checks. */
  spool(): Spool;
  cleanup(): Promise<void>;
}

/** Appends `list` to the backend's spool (opened and closed around it). */
export async function seed(backend: Backend, list: SpooledEvent[]): Promise<void> {
  const spool = backend.spool();
  await spool.open();
  try {
    await spool.append(list);
  } finally {
    await spool.close();
  }
}

/** A table of its own in the PostgreSQL at `url`. */
export function postgresBackend(url: string): Backend {
  const table = `cli_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => {});
  return {
    flags: ['--postgres', url, '--table', table],
    spool: () => postgresSpool(pool, { table }),
    cleanup: () => pool.end(),
  };
}

/** A stream of its own in the Redis at `url`. */
export function redisBackend(url: string): Backend {
  const stream = `cli:${randomUUID()}`;
  const client = new Redis(url, { lazyConnect: false });
  client.on('error', () => {});
  return {
    flags: ['--redis', url, '--stream', stream],
    spool: () => redisSpool(client, { stream }),
    cleanup: async () => void (await client.quit()),
  };
}

/** A directory of its own for a file spool. */
export function fileBackend(): Backend {
  const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-cli-'));
  return {
    flags: ['--dir', dir],
    spool: () => fileSpool(dir),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The path of `usage.record` on the mock, which the tests' faults aim at. */
export const USAGE_PATH = '/api/usage/events/';

/** The three durable spools, named, for `describe.each`: a fresh place of each per test. */
export function durableSpools(
  postgres: { readonly cluster: { url: string } },
  redis: { readonly server: { url: string } },
): [string, () => Backend][] {
  return [
    ['postgres', () => postgresBackend(postgres.cluster.url)],
    ['redis', () => redisBackend(redis.server.url)],
    ['file', () => fileBackend()],
  ];
}

/** A backend of `make` for each test, with the mock's faults cleared before and after. */
export function useBackend(
  cli: { readonly mock: MockServer },
  make: () => Backend,
): { readonly backend: Backend } {
  const ref = {} as { backend: Backend };
  beforeEach(() => {
    ref.backend = make();
    cli.mock.faults.clear();
  });
  afterEach(async () => {
    cli.mock.faults.clear();
    await ref.backend.cleanup();
  });
  return ref;
}
