// A webhook receiver instance on the transactional inbox: node:http + createNodeWebhookHandler +
// postgresDedupeStore, on node-postgres (DRIVER=pg) or postgres.js (DRIVER=postgres). Prints
// {"type":"listening","port"} when up and {"type":"start"|"inside"|"done","id"} during onEvent. Its
// onEvent writes one row (the event's id, this process's pid) into APP_TABLE through the
// transaction it is given, then sleeps EVENT_MS; with DOOMED=1 it never finishes (the test kills it
// while its write is still uncommitted).
import { createServer } from 'node:http';
import pg from 'pg';
import postgres from 'postgres';
import { createNodeWebhookHandler } from '../../src/index.js';
import { postgresDedupeStore } from '../../src/postgres/dedupe-store.js';
import { print } from '../redis/print.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const url = env('PG_URL');
const appTable = env('APP_TABLE');
const eventMs = Number(env('EVENT_MS'));
const doomed = process.env.DOOMED === '1';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let db: unknown;
let write: (transaction: unknown, id: string) => Promise<unknown>;
const insert = `INSERT INTO ${appTable} (event_id, pid) VALUES ($1, $2)`;
if (env('DRIVER') === 'pg') {
  const pool = new pg.Pool({ connectionString: url });
  pool.on('error', () => {});
  db = pool;
  write = (transaction, id) => (transaction as pg.PoolClient).query(insert, [id, process.pid]);
} else {
  db = postgres(url, { onnotice: () => {} });
  write = (transaction, id) => (transaction as postgres.TransactionSql).unsafe(insert, [id, process.pid]);
}

const handler = createNodeWebhookHandler({
  dedupe: postgresDedupeStore(db, { table: env('TABLE') }),
  claimTtlMs: Number(env('CLAIM_TTL_MS')),
  onEvent: async (event, { transaction }) => {
    const id = event.transaction_id;
    print({ type: 'start', id });
    await write(transaction, id);
    if (doomed) {
      print({ type: 'inside', id });
      await new Promise(() => {});
    }
    await sleep(eventMs);
    print({ type: 'done', id });
  },
});

const server = createServer(handler);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  print({ type: 'listening', port: typeof address === 'object' && address ? address.port : 0 });
});
