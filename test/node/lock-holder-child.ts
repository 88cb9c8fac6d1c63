import { fileSpool } from '../../src/node/index.js';

// Opens the file spool in DIR, appends COUNT events and says so, then waits to be killed: what a
// container's app holds when it is SIGKILLed or OOM-killed.
const spool = fileSpool(process.env.DIR as string);
await spool.open();
const count = Number(process.env.COUNT);
await spool.append(
  Array.from({ length: count }, (_, i) => ({
    account_ref_id: 'acct_active',
    product_code: 'api-gateway',
    meter_code: 'api_calls',
    quantity: 1,
    event_key: `left-${i}`,
  })),
);
process.stdout.write(`${JSON.stringify({ type: 'ready', pid: process.pid })}\n`);
setInterval(() => {}, 60_000);
