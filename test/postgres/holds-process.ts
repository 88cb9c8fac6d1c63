// One instance of a service that reserves prepaid credits before its actions: createCreditHolds
// against the mock (BASE_URL, API_KEY), on a postgresHoldStore shared with the other instances
// (node-postgres, or postgres.js with DRIVER=postgres.js) in PG_URL, tables prefixed TABLE. Prints
// {"type":"ready"} once its tables exist, then answers JSON commands on stdin, each with an `id`:
// - {cmd:"workload", count, maxQuantity, seed}: runHoldWorkload on ACCOUNT's credits, answered
//   {"type":"records", records};
// - {cmd:"reserve", quantity, ttlMs, times}: `times` reservations one after the other, the granted
//   ones kept open, answered {"type":"reserved", results: [{approved, available}]} (stdout to a
//   pipe is synchronous: once printed, the test has it even if the process is SIGKILLed after);
// - {cmd:"settle"}: settles every open hold in full, answered {"type":"settled", debits: [{event_key,
//   approved, debited}]}.
import { createInterface } from 'node:readline';
import pg from 'pg';
import postgres from 'postgres';
import { type CreditHold, createCreditHolds } from '../../src/index.js';
import { postgresHoldStore } from '../../src/postgres/index.js';
import { runHoldWorkload } from '../credits/workload.js';
import { env, mockBilling, print } from '../redis/print.js';

const url = env('PG_URL');
const ledger = { account_ref_id: env('ACCOUNT'), product_code: 'ai-assistant', meter_code: 'credits' };

const pool = new pg.Pool({ connectionString: url, max: 12 });
pool.on('error', () => {});
const sql = env('DRIVER') === 'postgres.js' ? postgres(url, { max: 12, onnotice: () => {} }) : undefined;
const store = postgresHoldStore(sql ?? pool, { table: env('TABLE'), timeoutMs: 10_000 });
const holds = createCreditHolds(mockBilling(), { store });
const open: CreditHold[] = [];

// Makes the tables (an account of its own: no ledger of the test's is touched).
await store.invalidate(`ready_${process.pid}`);
print({ type: 'ready' });

type Command = { cmd: string; id: number } & Record<string, number>;

async function answer(c: Command): Promise<void> {
  if (c.cmd === 'workload') {
    const records = await runHoldWorkload(holds, ledger, c.count!, c.maxQuantity!, c.seed!);
    print({ type: 'records', id: c.id, records });
  } else if (c.cmd === 'reserve') {
    const results: { approved: boolean; available: number }[] = [];
    for (let i = 0; i < c.times!; i++) {
      const r = await holds.reserve({ ...ledger, quantity: c.quantity!, ttlMs: c.ttlMs! });
      if (r.approved) open.push(r.hold);
      results.push({ approved: r.approved, available: r.available });
    }
    print({ type: 'reserved', id: c.id, results });
  } else if (c.cmd === 'settle') {
    const settling = open.splice(0);
    const debits = await Promise.all(
      settling.map(async (h) => {
        const d = await h.settle(h.quantity);
        return { event_key: h.event_key, approved: d.approved, debited: h.quantity };
      }),
    );
    print({ type: 'settled', id: c.id, debits });
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as Command;
  answer(command).catch((error: unknown) => print({ type: 'failed', id: command.id, error: String(error) }));
}
