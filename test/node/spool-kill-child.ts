import { openSync, writeSync } from 'node:fs';
import { fileSpool } from '../../src/node/index.js';

// Appends events and acknowledges most of them, as fast as it can, until it is killed. Writes to
// the side file LOG, one JSON line each, with a write(2) per line (in the page cache at once, so
// every line written before a SIGKILL is read by the parent): {type:'a',k,id} once an append
// resolved, {type:'q',k} before its ack is asked for, {type:'k',k} once the ack resolved. (Not
// stdout: a pipe the parent is slow to read queues lines in this process, and a kill loses them.)
const dir = process.env.DIR!;
const run = process.env.RUN!;
const log = openSync(process.env.LOG!, 'a');
const print = (m: object) => writeSync(log, `${JSON.stringify(m)}\n`);
const spool = fileSpool(dir, { compactAfterBytes: Number(process.env.COMPACT) });
await spool.open();

// Leftovers of the runs that were killed: acknowledged first.
const left = await spool.take(Number.MAX_SAFE_INTEGER);
for (const e of left) print({ type: 'q', k: e.event.event_key });
await spool.ack(left.map((e) => e.id));
for (const e of left) print({ type: 'k', k: e.event.event_key });
process.stdout.write(`${JSON.stringify({ type: 'ready', left: left.length })}\n`);

let n = 0;
async function worker(): Promise<never> {
  for (;;) {
    const key = `r${run}-${n++}`;
    const [id] = await spool.append([
      {
        account_ref_id: 'acct_active',
        product_code: 'api-gateway',
        meter_code: 'api_calls',
        quantity: 1,
        event_key: key,
      },
    ]);
    print({ type: 'a', k: key, id });
    // One in five is left unacknowledged for a while (acked by a later run).
    if (n % 5 === 0) continue;
    print({ type: 'q', k: key });
    await spool.ack([id!]);
    print({ type: 'k', k: key });
  }
}
await Promise.all(Array.from({ length: 32 }, worker));
