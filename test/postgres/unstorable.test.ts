// An event no spool can store (a NUL or a lone surrogate in a string) is refused before any
// statement, with an InvalidRequestError naming the field: the caller's transaction stays usable,
// on both drivers; and every spool keeps the same rule.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/core/errors/index.js';
import { BillingClient, createUsageTracker, memorySpool, type UsageTracker } from '../../src/index.js';
import { fileSpool } from '../../src/node/index.js';
import { postgresSpool } from '../../src/postgres/index.js';
import { redisSpool } from '../../src/redis/index.js';
import type { Spool } from '../../src/tracker/spool.js';
import { caught, useMockServer } from '../helpers.js';
import { useRedisServer } from '../redis/redis-server.js';
import { usePostgres } from './cluster.js';

const cluster = usePostgres();
const redis = useRedisServer();
const mock = useMockServer();
let pool: pg.Pool;
let sql: postgres.Sql;
const trackers: UsageTracker[] = [];
let tables = 0;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: cluster.cluster.url });
  pool.on('error', () => {});
  sql = postgres(cluster.cluster.url, { onnotice: () => {} });
  await pool.query('CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY)');
});
afterAll(async () => {
  for (const tracker of trackers) await tracker.close({ timeoutMs: 0 }).catch(() => {});
  await Promise.all([pool?.end(), sql?.end()]);
});

const billing = () => new BillingClient({ baseUrl: mock.server.baseUrl, apiKey: mock.server.apiKey });
const event = (metadata: Record<string, unknown>) => ({
  account_ref_id: 'acct_active',
  product_code: 'api-gateway',
  meter_code: 'api_calls',
  quantity: 1,
  metadata,
});
const BAD: [string, Record<string, unknown>, string][] = [
  ['a NUL', { note: 'a\u0000b' }, 'metadata.note'],
  ['a lone surrogate', { note: 'x\ud800' }, 'metadata.note'],
  ['a lone surrogate in a nested name', { items: [{ 'k\udc00': 1 }] }, 'metadata.items[0]'],
];

function tracker(spool: Spool): UsageTracker {
  const made = createUsageTracker(billing(), { spool, onError: () => {} });
  trackers.push(made);
  return made;
}

const fieldOf = (error: unknown) => (error as InvalidRequestError).issues[0]?.field;

describe.each(BAD)('track(event with %s, { transaction })', (_what, metadata, field) => {
  it('pg: refused naming the field; the transaction goes on and commits', async () => {
    const usage = tracker(postgresSpool(pool, { table: `unstorable_${++tables}` }));
    const client = await pool.connect();
    const id = `order-${tables}`;
    try {
      await client.query('BEGIN');
      await client.query('INSERT INTO orders (id) VALUES ($1)', [id]);
      const error = await caught(() => usage.track(event(metadata), { transaction: client }));
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect(fieldOf(error)).toBe(field);
      await client.query('SELECT 1');
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect((await pool.query('SELECT id FROM orders WHERE id = $1', [id])).rows).toHaveLength(1);
  });

  it('postgres.js: refused naming the field; sql.begin commits', async () => {
    const usage = tracker(postgresSpool(sql, { table: `unstorable_${++tables}` }));
    const id = `order-${tables}`;
    let error: unknown;
    await sql.begin(async (tx) => {
      await tx`INSERT INTO orders (id) VALUES (${id})`;
      error = await caught(() => usage.track(event(metadata), { transaction: tx }));
    });
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(fieldOf(error)).toBe(field);
    expect(await sql`SELECT id FROM orders WHERE id = ${id}`).toHaveLength(1);
  });
});

describe('every spool keeps the same rule', () => {
  const spools: [string, () => { spool: Spool; cleanup(): Promise<void> }][] = [
    ['memorySpool', () => ({ spool: memorySpool(), cleanup: async () => {} })],
    [
      'fileSpool',
      () => {
        const dir = mkdtempSync(join(tmpdir(), 'unstorable-'));
        return { spool: fileSpool(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
      },
    ],
    [
      'redisSpool',
      () => {
        const client = new Redis(redis.server.url);
        client.on('error', () => {});
        return {
          spool: redisSpool(client, { stream: `unstorable:${++tables}` }),
          cleanup: async () => void (await client.quit()),
        };
      },
    ],
    [
      'postgresSpool',
      () => ({ spool: postgresSpool(pool, { table: `unstorable_${++tables}` }), cleanup: async () => {} }),
    ],
  ];
  it.each(spools)('%s: track refuses it naming the field; nothing is queued', async (_name, make) => {
    const { spool, cleanup } = make();
    try {
      const usage = tracker(spool);
      for (const [, metadata, field] of BAD) {
        const error = await caught(() => usage.track(event(metadata)));
        expect(error).toBeInstanceOf(InvalidRequestError);
        expect(fieldOf(error)).toBe(field);
      }
      await usage.track(event({ note: 'fine \ud83d\ude00' }));
      await usage.flush();
      expect((await usage.close()).unsent).toBe(0);
    } finally {
      await cleanup();
    }
  });
});
