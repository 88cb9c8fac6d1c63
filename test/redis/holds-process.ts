// One instance of an application reserving prepaid credits with createCreditHolds on redisHoldStore,
// debiting the mock over HTTP. Prints {"type":"ready"} once connected, then takes one JSON command a
// line on stdin and answers each with one JSON line (see the switch below). Every store failure the
// holds report after a debit is printed as {"type":"store-error"}.
import { createInterface } from 'node:readline';
import { type CreditHold, createCreditHolds } from '../../src/index.js';
import { type RedisClient, redisHoldStore } from '../../src/redis/index.js';
import { runHoldWorkload } from '../credits/workload.js';
import { connectFromEnv } from './clients.js';
import { env, mockBilling, print } from './print.js';

// The client the test asked for (clients.ts): node-redis or ioredis, one node or a cluster.
const redis = await connectFromEnv();
const holds = createCreditHolds(mockBilling(), {
  // A loaded machine (a cluster of six nodes on two cores) may answer slowly: no test here times Redis.
  store: redisHoldStore(redis.client as RedisClient, { prefix: env('PREFIX'), timeoutMs: 5_000 }),
  onError: (error) => print({ type: 'store-error', error: String(error) }),
});
const ledger = (account: string) => ({
  account_ref_id: account,
  product_code: 'ai-assistant',
  meter_code: 'credits',
});
/** Holds reserved by `reserve`, by id, for `settle`. */
const open = new Map<string, CreditHold>();

print({ type: 'ready', pid: process.pid });

type Command =
  /** This process's share of runHoldWorkload on the account: its records, or the error it failed with. */
  | { cmd: 'workload'; id: number; account: string; count: number; maxQuantity: number; seed: number }
  /** One reservation: approved or not, available, and the hold's id and event_key when approved. */
  | { cmd: 'reserve'; id: number; account: string; quantity: number; ttlMs?: number }
  /** Settles a hold `reserve` made: the debit's result. */
  | { cmd: 'settle'; id: number; hold: string; used: number };

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as Command;
  switch (command.cmd) {
    case 'workload': {
      try {
        const records = await runHoldWorkload(
          holds,
          ledger(command.account),
          command.count,
          command.maxQuantity,
          command.seed,
        );
        print({ type: 'worked', id: command.id, records, stats: holds.stats() });
      } catch (error) {
        print({ type: 'worked', id: command.id, error: String(error) });
      }
      break;
    }
    case 'reserve': {
      const r = await holds.reserve({
        ...ledger(command.account),
        quantity: command.quantity,
        ttlMs: command.ttlMs,
      });
      if (r.approved) open.set(r.hold.id, r.hold);
      print({
        type: 'reserved',
        id: command.id,
        approved: r.approved,
        available: r.available,
        hold: r.approved ? r.hold.id : null,
        eventKey: r.approved ? r.hold.event_key : null,
        stats: holds.stats(),
      });
      break;
    }
    case 'settle': {
      const result = await open.get(command.hold)?.settle(command.used);
      print({ type: 'settled', id: command.id, result: result ?? null });
      break;
    }
  }
}
