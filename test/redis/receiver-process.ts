// A webhook receiver instance: node:http + createNodeWebhookHandler + redisDedupeStore. Prints
// {"type":"listening","port"} when up, {"type":"start"|"done","id"} around onEvent, and records each
// completed onEvent in the Redis list <PREFIX>completions, so the test can count them per id even
// across killed processes. What onEvent does is read from the event's account_ref_id:
// "hang" never resolves, "slow-<ms>" takes that long, "flaky" fails the first attempt of an id.
import { createServer } from 'node:http';
import { createNodeWebhookHandler } from '../../src/index.js';
import { type RedisClient, redisDedupeStore } from '../../src/redis/index.js';
import { connectFromEnv } from './clients.js';
import { print } from './print.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const prefix = env('PREFIX');
const eventMs = Number(env('EVENT_MS'));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// The client the test asked for (clients.ts): node-redis or ioredis, one node or a cluster.
const redis = await connectFromEnv();

const handler = createNodeWebhookHandler({
  dedupe: redisDedupeStore(redis.client as RedisClient, { prefix: `${prefix}webhook:` }),
  claimTtlMs: Number(env('CLAIM_TTL_MS')),
  onEvent: async (event) => {
    const id = event.transaction_id;
    const how = event.account_ref_id;
    print({ type: 'start', id });
    if (how.includes('hang')) await new Promise(() => {});
    if (how.includes('flaky') && Number(await redis.command(['INCR', `${prefix}attempts:${id}`])) === 1) {
      throw new Error('flaky: first attempt fails');
    }
    await sleep(Number(/slow-(\d+)/.exec(how)?.[1] ?? eventMs));
    await redis.command(['RPUSH', `${prefix}completions`, id]);
    print({ type: 'done', id });
  },
});

const server = createServer(handler);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  print({ type: 'listening', port: typeof address === 'object' && address ? address.port : 0 });
});
