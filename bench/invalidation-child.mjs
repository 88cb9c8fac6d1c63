// One instance of an application for the invalidation mode (bench/invalidation.mjs, issue 28):
// `createAccessCache` from the built package on `redisAccessStore`, asking the SDK's mock over HTTP.
// Started with its settings in the env (REDIS: `{"url"}` for one node or `{"cluster": [{host, port}]}`;
// PREFIX, BASE_URL, API_KEY, WARM_ACCOUNT). Prints {"type":"ready"} once warmed up (one lookup: across
// the instances one asks the service and the others read its answer from the store, as in a fleet
// just started), then takes one JSON command a line on stdin and answers each with one JSON line:
//   {cmd: 'lookup', id, account}            → {type: 'looked', id, value}
//   {cmd: 'until', id, account, expect}     → isActive every 2 ms until it answers `expect`:
//                                             {type: 'seen', id, at, lookups}
//   {cmd: 'invalidate', id, account}        → {type: 'invalidated', id, start, at}
// Times are the host's clock in ms (sub-ms precision), comparable between processes of one host.
// BENCH_SDK_DIST (a dist/ directory) measures another build than the package's, e.g. one from before a change.

import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const dist = process.env.BENCH_SDK_DIST;
const from = (entry) => (dist ? pathToFileURL(join(dist, entry, 'index.js')).href : `billing-sdk/${entry}`);
const { BillingClient, createAccessCache } = await import(dist ? from('.') : 'billing-sdk');
const { redisAccessStore } = await import(from('redis'));

const env = (name) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const now = () => performance.timeOrigin + performance.now();
const print = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The application's Redis client, as it would make one, and what the store is given. */
async function connect(target) {
  if (target.url) {
    const { createClient } = await import('redis');
    const client = createClient({ url: target.url });
    client.on('error', () => {});
    await client.connect();
    return client;
  }
  // ioredis's Cluster behind a `sendCommand(args)` of its own: `call` routes each EVAL by its first
  // key (every key of one step shares a hash tag, which the store chooses).
  const { Cluster } = await import('ioredis');
  const cluster = new Cluster(target.cluster, { lazyConnect: true });
  cluster.on('error', () => {});
  await cluster.connect();
  return { sendCommand: (args) => cluster.call(args[0], ...args.slice(1)) };
}

/** The store as given, but each call of its watch listener is printed (`told`), after the cache acted on it. */
function told(store) {
  return {
    ...store,
    watch: (listener, onError) =>
      store.watch((account) => {
        listener(account);
        print({ type: 'told', account: account ?? null, at: now() });
      }, onError),
  };
}

const client = await connect(JSON.parse(env('REDIS')));
const onErrors = [];
const access = createAccessCache(
  new BillingClient({ apiKey: env('API_KEY'), baseUrl: env('BASE_URL'), logLevel: 'off', maxRetries: 0 }),
  {
    ttlMs: 60_000,
    denyTtlMs: 60_000,
    staleMs: 60_000,
    store: told(redisAccessStore(client, { prefix: env('PREFIX') })),
    onError: (error) => void onErrors.push(String(error)),
  },
);
await access.isActive({ account_ref_id: env('WARM_ACCOUNT') });
print({ type: 'ready', pid: process.pid });

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.cmd === 'lookup') {
    print({
      type: 'looked',
      id: command.id,
      value: await access.isActive({ account_ref_id: command.account }),
    });
  } else if (command.cmd === 'until') {
    void (async () => {
      for (let lookups = 1; ; lookups++) {
        const value = await access.isActive({ account_ref_id: command.account });
        if (value === command.expect) {
          print({ type: 'seen', id: command.id, at: now(), lookups, onErrors: onErrors.length });
          return;
        }
        await sleep(2);
      }
    })();
  } else if (command.cmd === 'invalidate') {
    const start = now();
    await access.invalidate(command.account);
    print({ type: 'invalidated', id: command.id, start, at: now() });
  }
}
