import { openSync, readFileSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { BillingClient, createUsageTracker } from '../../src/index.js';
import { fileSpool } from '../../src/node/index.js';

/**
 * A process tracking usage through `createUsageTracker` + `fileSpool(DIR)` over real HTTP, for
 * test/tracker/chaos-file.test.ts, which SIGKILLs it at random moments and starts it again.
 * Says where it is in JSON lines on stdout (`ready`, `tracked`, `closed`, `error`, `dead`), and
 * reports each resolved track in JSON lines to the side file REPORT, one write(2) each: in the page
 * cache at once, so the parent reads every line written before a kill (stdout is no good for that:
 * Node queues what a slow reader has not taken, and a kill loses it). On `close` (stdin), closes
 * the tracker (everything sent) and exits.
 *
 * MODE=plain: tracks the events numbered in TODO_FILE (a JSON array), RATE a second; event n has
 * quantity n % 7 + 1 and metadata { n }; one in three carries the caller key `ck-<n>`, the others
 * get the tracker's. Reports {type:'t', n, k} once `track(n)` resolved (it is in the spool).
 * MODE=aggregate: tracks COUNT unit events without key or metadata (summed by the tracker), in
 * bursts of BURST every PERIOD ms; reports (and prints) {type:'burst', tracked} after each burst resolved.
 */
const env = process.env;
const print = (m: object): void => {
  process.stdout.write(`${JSON.stringify(m)}\n`);
};
const reportFd = openSync(env.REPORT!, 'a');
const report = (m: object): void => {
  writeSync(reportFd, `${JSON.stringify(m)}\n`);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const meter = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };

const billing = new BillingClient({
  baseUrl: env.BASE_URL,
  apiKey: env.API_KEY,
  // Dropped answers are retried by the client at once, with the same key.
  maxRetries: 10,
  retryDelay: () => 5,
  logLevel: 'error',
});
const tracker = createUsageTracker(billing, {
  spool: fileSpool(env.DIR!),
  concurrency: 8,
  ...(env.MODE === 'aggregate' ? { aggregate: { windowMs: Number(env.WINDOW_MS) } } : {}),
  onDeadLetter: (event, reason) => print({ type: 'dead', key: event.event_key, reason: reason.type }),
});

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'close') return;
  void tracker.close({ timeoutMs: Number.POSITIVE_INFINITY }).then(({ unsent }) => {
    print({ type: 'closed', unsent, stats: tracker.stats() });
    process.exit(0);
  });
});

print({ type: 'ready' });
const failed = (n: number | undefined) => (error: unknown) =>
  print({ type: 'error', n, message: String((error as Error).message) });

if (env.MODE === 'plain') {
  const todo = JSON.parse(readFileSync(env.TODO_FILE!, 'utf8')) as number[];
  const rate = Number(env.RATE);
  const started = Date.now();
  const tracks: Promise<void>[] = [];
  for (let i = 0; i < todo.length; i++) {
    // Paced: event i starts i / rate seconds in, several at once (their appends share a commit).
    const due = started + (i * 1000) / rate;
    if (due > Date.now() + 2) await sleep(due - Date.now());
    const n = todo[i]!;
    const event = {
      ...meter,
      quantity: (n % 7) + 1,
      metadata: { n },
      ...(n % 3 ? {} : { event_key: `ck-${n}` }),
    };
    tracks.push(
      tracker.track(event).then(({ event_key }) => report({ type: 't', n, k: event_key }), failed(n)),
    );
  }
  await Promise.all(tracks);
  print({ type: 'tracked' });
} else {
  const count = Number(env.COUNT);
  const burst = Number(env.BURST);
  let tracked = 0;
  while (tracked < count) {
    const size = Math.min(burst, count - tracked);
    const next = Date.now() + Number(env.PERIOD_MS);
    await Promise.all(
      Array.from({ length: size }, () => tracker.track({ ...meter, quantity: 1 }).catch(failed(undefined))),
    );
    tracked += size;
    report({ type: 'burst', tracked });
    print({ type: 'burst', tracked });
    await sleep(next - Date.now());
  }
  print({ type: 'tracked' });
}
