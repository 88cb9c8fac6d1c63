// One measurement in a fresh process: one client, one concurrency, one round. A fresh process per
// sample means no client runs on a heap, JIT state or connection pool another client left behind.
// Usage (by run.mjs): node measure-child.mjs '{"client":"fetch","port":1234,"concurrency":32,"warmupMs":750,"durationMs":2000}'
// Prints one line `BENCH_RESULT {json}`; exits 1 with the error on stderr if any request failed.
import { PAGE_SIZE, RESULT_PREFIX, targetFor } from './shared.mjs';

/**
 * @typedef {object} ChildOptions
 * @property {string} client       module name under clients/
 * @property {number} port
 * @property {number} concurrency
 * @property {number} warmupMs
 * @property {number} durationMs
 */

/**
 * `concurrency` workers each send a request, await it, and loop until `ms` have passed. Requests in
 * flight at the deadline finish and count; the caller measures time until the last one did, so the
 * tail is in both the count and the elapsed time. Bounded: no worker starts a request after the deadline.
 * @param {() => Promise<unknown[]>} request
 * @param {number} concurrency
 * @param {number} ms
 */
async function runFor(request, concurrency, ms) {
  const deadline = performance.now() + ms;
  let done = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      const results = await request();
      // The same cheap check for every client, so a wrong or empty answer can never pass as a fast one.
      if (results.length !== PAGE_SIZE)
        throw new Error(`expected ${PAGE_SIZE} results, got ${results.length}`);
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return done;
}

/** @param {ChildOptions} o */
async function main(o) {
  /** @type {import('./shared.mjs').ClientModule} */
  const client = await import(`./clients/${o.client}.mjs`);
  const request = await client.create(targetFor(o.port));

  // One request checked in full before anything is timed: the client reached the server, was accepted
  // (the server refuses any other query or key) and got 20 invoices of 17 fields.
  const first = await request();
  const fields = first[0] && typeof first[0] === 'object' ? Object.keys(first[0]).length : 0;
  if (first.length !== PAGE_SIZE || fields !== 17) {
    throw new Error(
      `${o.client}: expected ${PAGE_SIZE} invoices of 17 fields, got ${first.length} of ${fields}`,
    );
  }

  // Warm-up at the same concurrency: JIT, connection pool and lazy initialisation happen here, untimed.
  await runFor(request, o.concurrency, o.warmupMs);

  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const requests = await runFor(request, o.concurrency, o.durationMs);
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);

  const result = {
    client: o.client,
    concurrency: o.concurrency,
    requests,
    elapsedMs,
    rps: requests / (elapsedMs / 1000),
    // user + system of this whole process (main thread, GC and libuv threads): everything the client costs.
    cpuUsPerReq: (cpu.user + cpu.system) / requests,
  };
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

main(JSON.parse(process.argv[2] ?? '{}')).then(
  // Exit at once: keep-alive sockets and client timers would otherwise hold the process open.
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
