// `billing-sdk doctor` as a process against the mock: a good key, a refused one, none, a base URL
// that does not answer; with spool flags, a PostgreSQL table holding events, a dead database, a
// Redis without the stream and a file spool (counted, and failed when its events waited 2 hours).
// The clock check is a pure function of the Date header.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { clockCheck, MAX_SKEW_MS } from '../../src/cli/doctor-service.js';
import { otherSpoolsCheck, STALE_MS } from '../../src/cli/doctor-spool.js';
import type { OtherSpool, SpoolTarget } from '../../src/cli/targets/index.js';
import { missingDriver, optionalImport } from '../../src/cli/targets/load.js';
import { BillingClient, createUsageTracker } from '../../src/index.js';
import { redisSpool } from '../../src/redis/index.js';
import { serviceNamespace } from '../../src/util/service-namespace.js';
import { usePostgres } from '../postgres/cluster.js';
import { useRedisServer } from '../redis/redis-server.js';
import { events, fileBackend, postgresBackend, redisBackend, run, seed, useCli } from './helpers.js';

const cli = useCli();
const postgres = usePostgres();
const redis = useRedisServer();

type Check = { check: string; ok: boolean | null; detail: string };
const checksOf = (json: Record<string, unknown>[]) => (json[0]?.checks ?? []) as Check[];
const named = (checks: Check[], name: string) => checks.find((c) => c.check === name);

describe('doctor: the service', () => {
  it('a good key: every check passes, one line each, exit 0', async () => {
    const result = await run(cli, ['doctor']);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ok +api key +accepted$/);
    expect(lines[1]).toMatch(/^ok +base url +http/);
    expect(lines[2]).toMatch(/^ok +clock +in step/);
  });

  it('a key the service refuses: the api key check fails, naming the 401; exit 1', async () => {
    const result = await run(cli, ['doctor', '--json'], { BILLING_API_KEY: 'sk_wrong_key' });
    expect(result.code).toBe(1);
    const checks = checksOf(result.json);
    expect(result.json[0]?.ok).toBe(false);
    expect(named(checks, 'api key')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('refused with 401'),
    });
    expect(named(checks, 'base url')?.ok).toBe(true);
    expect(named(checks, 'clock')?.ok).toBe(true);
  });

  it('a key the service knows but refuses with 403: named as such, the URL answers; exit 1', async () => {
    cli.mock.faults.add({ method: 'GET', path: '/api/products/', status: 403 });
    try {
      const result = await run(cli, ['doctor', '--json']);
      expect(result.code).toBe(1);
      const checks = checksOf(result.json);
      expect(named(checks, 'api key')).toMatchObject({
        ok: false,
        detail: expect.stringContaining('refused with 403'),
      });
      expect(named(checks, 'base url')?.ok).toBe(true);
    } finally {
      cli.mock.faults.clear();
    }
  });

  it('no key: named as missing, the URL and the clock still checked; exit 1', async () => {
    const result = await run(cli, ['doctor', '--json'], { BILLING_API_KEY: '' });
    expect(result.code).toBe(1);
    const checks = checksOf(result.json);
    expect(named(checks, 'api key')).toMatchObject({ ok: false, detail: expect.stringContaining('missing') });
    expect(named(checks, 'base url')?.ok).toBe(true);
  });

  it('a base URL that does not answer: it fails, the key and clock are not checked; exit 1', async () => {
    const result = await run(cli, ['doctor', '--json'], { BILLING_BASE_URL: 'http://127.0.0.1:1/api/' });
    expect(result.code).toBe(1);
    const checks = checksOf(result.json);
    expect(named(checks, 'base url')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('no answer'),
    });
    expect(named(checks, 'api key')?.ok).toBeNull();
    expect(named(checks, 'clock')?.ok).toBeNull();
  });
});

describe('doctor: the spool', () => {
  it('a PostgreSQL table with events waiting: reachable, counted with the oldest age; exit 0', async () => {
    const backend = postgresBackend(postgres.cluster.url);
    try {
      await seed(backend, events(3));
      const result = await run(cli, ['doctor', ...backend.flags, '--json']);
      expect(result.code, result.stdout).toBe(0);
      const checks = checksOf(result.json);
      expect(named(checks, 'spool')?.ok).toBe(true);
      expect(named(checks, 'backlog')).toMatchObject({
        ok: true,
        detail: expect.stringMatching(/^3 events waiting, the oldest for \d+/),
      });
    } finally {
      await backend.cleanup();
    }
  });

  it('a dead database: the spool check fails; exit 1', async () => {
    const result = await run(cli, ['doctor', '--postgres', 'postgres://postgres@127.0.0.1:1/postgres']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^FAIL +spool +cannot use PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/postgres/m,
    );
  });

  it('a Redis without the stream: the backlog check says so; exit 1', async () => {
    const backend = redisBackend(redis.server.url);
    try {
      const result = await run(cli, ['doctor', ...backend.flags, '--json']);
      expect(result.code).toBe(1);
      expect(named(checksOf(result.json), 'backlog')).toMatchObject({
        ok: false,
        detail: expect.stringContaining('no stream'),
      });
    } finally {
      await backend.cleanup();
    }
  });

  it('a Redis stream and a file spool with events: counted; exit 0', async () => {
    for (const backend of [redisBackend(redis.server.url), fileBackend()]) {
      try {
        await seed(backend, events(2));
        const result = await run(cli, ['doctor', ...backend.flags, '--json']);
        expect(result.code, result.stdout).toBe(0);
        expect(named(checksOf(result.json), 'backlog')?.detail).toMatch(/^2 events waiting/);
      } finally {
        await backend.cleanup();
      }
    }
  });

  it('a file spool whose events waited 2 hours: the backlog check fails with their age; exit 1', async () => {
    const backend = fileBackend();
    try {
      // A spool log as a tracker wrote it 2 hours ago, nothing having sent it since.
      const at = Date.now() - 2 * 3_600_000;
      const lines = events(3).map(
        (event, i) => `${JSON.stringify({ t: 'e', id: String(i + 1), at, event })}\n`,
      );
      writeFileSync(join(backend.flags[1]!, 'spool.log'), lines.join(''));
      const result = await run(cli, ['doctor', ...backend.flags]);
      expect(result.code, result.stdout).toBe(1);
      expect(result.stdout).toMatch(
        /^FAIL +backlog +3 events waiting, the oldest for 2 h: is a relay running/m,
      );
      // Events appended a moment ago pass, with their age.
      await backend.cleanup();
      const fresh = fileBackend();
      try {
        await seed(fresh, events(2));
        const ok = await run(cli, ['doctor', ...fresh.flags, '--json']);
        expect(ok.code, ok.stdout).toBe(0);
        expect(named(checksOf(ok.json), 'backlog')).toMatchObject({
          ok: true,
          detail: expect.stringMatching(/^2 events waiting, the oldest for \d+ (ms|s)$/),
        });
      } finally {
        await fresh.cleanup();
      }
    } finally {
      await backend.cleanup();
    }
  });
});

describe('doctor and relay after a key rotation (issue 51 §2)', () => {
  it("names the old key's default stream with its backlog; relay --stream sends it with the current key", async () => {
    const connection = new Redis(redis.server.url);
    const old = 'sk_rotated_51';
    const list = events(2);
    try {
      // The app's writers under the old key, with redisSpool defaults: its service's stream.
      const writer = createUsageTracker(new BillingClient({ apiKey: old, baseUrl: cli.mock.baseUrl }), {
        spool: redisSpool(connection),
        relay: false,
      });
      for (const e of list) await writer.track(e);
      await writer.close();
    } finally {
      await connection.quit();
    }
    const stream = `billing-sdk:usage:${serviceNamespace(old, cli.mock.baseUrl)}`;
    const current = `billing-sdk:usage:${serviceNamespace(cli.mock.apiKey, cli.mock.baseUrl)}`;

    const doctor = await run(cli, ['doctor', '--redis', redis.server.url, '--json']);
    const checks = checksOf(doctor.json);
    // The current key's stream is made by its first tracker or relay: not there yet.
    expect(named(checks, 'spool')?.detail).toContain(current);
    expect(named(checks, 'backlog')?.ok).toBe(false);
    expect(named(checks, 'other spools')).toMatchObject({
      ok: true,
      detail: expect.stringMatching(new RegExp(`${stream} holds 2.*relay --redis … --stream <name> --once`)),
    });

    const relayed = await run(cli, [
      'relay',
      '--redis',
      redis.server.url,
      '--stream',
      stream,
      '--once',
      '--json',
    ]);
    expect(relayed.code, relayed.stderr).toBe(0);
    for (const e of list) expect(cli.mock.store.usageEvent(e.event_key)?.quantity).toBe(1);
  });
});

describe("doctor's other spools check", () => {
  const redisFlags = {
    kind: 'redis',
    url: 'redis://r',
    stream: undefined,
    cluster: false,
    consumer: undefined,
  } as const;
  const targetOf = (others: () => Promise<OtherSpool[] | undefined>) =>
    ({ others }) as unknown as SpoolTarget;

  it('passes on none, on empty ones and on young backlogs (another service whose relays run)', async () => {
    expect(
      await otherSpoolsCheck(
        targetOf(async () => []),
        redisFlags,
      ),
    ).toMatchObject({ ok: true, detail: 'none' });
    const empty = await otherSpoolsCheck(
      targetOf(async () => [{ name: 'billing-sdk:usage', waiting: 0 }]),
      redisFlags,
    );
    expect(empty).toMatchObject({ ok: true, detail: '1 other default streams, none holds events' });
    const young = await otherSpoolsCheck(
      targetOf(async () => [{ name: 'billing-sdk:usage:ab', waiting: 4, oldestMs: 2_000 }]),
      redisFlags,
    );
    expect(young).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/^billing-sdk:usage:ab holds 4, the oldest for 2 s/),
    });
  });

  it('fails when another backlog is older than the stale age, naming it and the command that sends it', async () => {
    const stale = await otherSpoolsCheck(
      targetOf(async () => [{ name: 'billing_sdk_usage_outbox', waiting: 9, oldestMs: STALE_MS + 1 }]),
      { kind: 'postgres', url: 'postgres://h/db', table: undefined, schema: undefined, consumer: undefined },
    );
    expect(stale).toMatchObject({
      ok: false,
      detail: expect.stringMatching(
        /^billing_sdk_usage_outbox holds 9.*no relay sends them.*--postgres … --table <name> --once/,
      ),
    });
  });

  it('is skipped, not failed, on a cluster or when listing is refused; absent for a file spool', async () => {
    expect(
      await otherSpoolsCheck(
        targetOf(async () => undefined),
        redisFlags,
      ),
    ).toMatchObject({ ok: null });
    const refused = await otherSpoolsCheck(
      targetOf(async () => {
        throw new Error('NOPERM this user has no permissions to run the scan command');
      }),
      redisFlags,
    );
    expect(refused).toMatchObject({ ok: null, detail: expect.stringContaining('NOPERM') });
    expect(
      await otherSpoolsCheck(
        targetOf(async () => []),
        { kind: 'file', dir: '/tmp/x' },
      ),
    ).toBeUndefined();
  });
});

describe('an optional driver', () => {
  it('not installed: undefined, so the command can name what to install; any other failure thrown', async () => {
    expect(
      await optionalImport(
        'billing-sdk-no-such-driver',
        () => import('billing-sdk-no-such-driver' as string),
      ),
    ).toBeUndefined();
    await expect(optionalImport('pg', () => Promise.reject(new Error('broken')))).rejects.toThrow('broken');
    expect(missingDriver('--postgres', 'the pg package', 'pg').message).toBe(
      '--postgres needs the pg package, which is not installed here: npm install pg',
    );
  });
});

describe('doctor: the clock check', () => {
  const at = Date.parse('2026-01-01T00:00:00Z');
  const header = new Date(at).toUTCString();
  it('passes within the Date header’s rounding, and reports a skew within the limit', () => {
    expect(clockCheck(header, at + 200, at + 400)).toMatchObject({
      ok: true,
      detail: expect.stringContaining('in step'),
    });
    expect(clockCheck(header, at + 10_000, at + 10_000)).toMatchObject({
      ok: true,
      detail: '10 s ahead of the service',
    });
  });
  it('fails past the limit, either way', () => {
    expect(clockCheck(header, at + MAX_SKEW_MS + 5_000, at + MAX_SKEW_MS + 5_000).ok).toBe(false);
    expect(clockCheck(header, at - 120_000, at - 120_000)).toMatchObject({
      ok: false,
      detail: expect.stringContaining('2 min behind'),
    });
  });
  it('is left out without a Date header', () => {
    expect(clockCheck(undefined, at, at).ok).toBeNull();
  });
});
