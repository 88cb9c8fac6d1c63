import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll } from 'vitest';
import { postgresDedupeStore } from '../../src/postgres/index.js';
import { idempotencyCases } from '../gate/idempotency-cases.js';
import { replayCases } from '../gate/replay-cases.js';
import { useMockServer } from '../helpers.js';
import { usePostgres } from './cluster.js';
import { uniqueTable } from './connect.js';

// Two gate instances, each with a store of its own on one table (a node-postgres pool and a
// postgres.js sql, as two processes may have): a key used, in flight or failed on one is seen so by
// the other.
const mock = useMockServer();
const ref = usePostgres();
let pool: pg.Pool;
let sql: postgres.Sql;
beforeAll(() => {
  pool = new pg.Pool({ connectionString: ref.cluster.url });
  pool.on('error', () => {});
  sql = postgres(ref.cluster.url, { onnotice: () => {} });
});
afterAll(async () => {
  await pool?.end();
  await sql?.end({ timeout: 1 });
});

idempotencyCases('two instances sharing PostgreSQL', mock, async () => {
  const table = uniqueTable('gate_keys');
  const doneTtlMs = 24 * 60 * 60 * 1000;
  return [postgresDedupeStore(pool, { table, doneTtlMs }), postgresDedupeStore(sql, { table, doneTtlMs })];
});

replayCases(
  'two instances sharing PostgreSQL',
  mock,
  async () => {
    const table = uniqueTable('replay_keys');
    return [postgresDedupeStore(pool, { table }), postgresDedupeStore(sql, { table })];
  },
  'shared',
);
