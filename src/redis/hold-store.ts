import {
  type HoldLedger,
  type HoldStore,
  type HoldStoreFree,
  type HoldStoreReserve,
  ledgerKey,
} from '../credits/store.js';
import { checkStoreArgs } from '../credits/store-args.js';
import { checkOptions, type Rule, text } from '../internal/checks.js';
import { randomUUID } from '../util/uuid.js';
import { adaptClient, type RedisClient } from './adapt.js';
import { evalScript, px, replyText, timerMs } from './client.js';
import { keyPrefix, tagged } from './keys.js';
import { EXTEND, INVALIDATE, RELEASE, RESERVE, SET_BALANCE, SETTLE } from './lua/holds.js';
import { storeFailure, unexpectedReply } from './store-errors.js';

/** Options of {@link redisHoldStore}. */
export interface RedisHoldStoreOptions {
  /**
   * Start of every key of the store; default `'billing-sdk:holds:'`. Clients of different services
   * (API keys, base URLs) sharing a prefix never share balances or holds: `createCreditHolds` keeps
   * each account's ledgers under a digest of its client's key and base URL. No hash tag is needed for
   * Redis Cluster: the store tags each account's keys itself (a tag in the prefix puts every key of
   * the store in that one slot).
   */
  prefix?: string | undefined;
  /**
   * How long to wait for Redis before the call fails, in ms: a reservation then rejects with a
   * {@link billing-sdk!StoreError} (holds never fail open). Default 500.
   */
  timeoutMs?: number | undefined;
}

const OPERATION = 'redisHoldStore';

const optionRules = {
  prefix: [text, keyPrefix],
  timeoutMs: [timerMs],
} satisfies Record<keyof RedisHoldStoreOptions, Rule[]>;

/** How long an account's keys live at least after a write, in ms (plus the ttl of a hold it grants). */
const KEEP_MS = 24 * 60 * 60 * 1000;

/**
 * The `HoldStore` of `createCreditHolds` in Redis, for several instances debiting the same
 * accounts: every reservation of one account, whichever instance makes it, is granted only while the
 * account's known balance minus every unexpired hold covers it. Each method is one Lua script, so one
 * atomic step whatever the other instances send meanwhile; holds expire and balances age by Redis's
 * clock alone (TIME), so hosts whose clocks disagree still agree on when a hold lapses.
 *
 * Keys: one hash per account (`<prefix>{<account>}:a`: per ledger its balance, when it was read,
 * what its settles debited; the account's invalidation epoch) and one hash of holds per ledger
 * (`<prefix>{<account>}:h:<ledger>`). A step reads only its own ledger's holds, and `invalidate`
 * moves the epoch alone, whatever the account's ledgers. Each write makes the account's keys live
 * at least a day (plus the hold's ttl), so an abandoned account goes away.
 *
 * Redis Cluster works with the default options: an account's keys share its hash tag, so each step
 * is one script in one slot, and accounts spread over every master.
 *
 * When Redis is down or slow, every method rejects within `timeoutMs` with a
 * {@link billing-sdk!StoreError} (code `'unavailable'`; `'unexpected_reply'` when Redis answers what
 * the store never writes): a reservation then fails, it never grants credits unchecked. A
 * reservation that timed out may still land in Redis afterwards: its hold then only holds credits
 * back until its ttl. A resent reservation (same hold id) finds its hold and counts it once.
 *
 * @param client - A connected client: node-redis (`createClient()` or `createCluster()` from
 * `redis`), ioredis (`new Redis()` or `new Cluster()`), or any {@link RedisLike}; see
 * {@link RedisClient}. It is not closed here: the application owns it.
 * @param options - See {@link RedisHoldStoreOptions}.
 * @throws {@link billing-sdk!InvalidRequestError} when `client` is none of these, `options` is not
 * a plain object, or an option is unknown or bad (`prefix` not a non-empty string or holding an
 * empty `{}`, `timeoutMs` not a number > 0 a timer can wait), naming each.
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { BillingClient, createCreditHolds } from 'billing-sdk';
 * import { redisHoldStore } from 'billing-sdk/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const holds = createCreditHolds(new BillingClient(), { store: redisHoldStore(redis) });
 * const r = await holds.reserve({ account_ref_id: 'acct_1', product_code: 'ai-assistant', meter_code: 'credits', quantity: 2_000 });
 * if (r.approved) await r.hold.settle(1_234); // debits 1 234, frees the rest for every instance
 * ```
 */
export function redisHoldStore(client: RedisClient, options: RedisHoldStoreOptions = {}): HoldStore {
  const runner = adaptClient(OPERATION, client);
  const given = checkOptions(OPERATION, options, optionRules) as RedisHoldStoreOptions;
  const prefix = given.prefix ?? 'billing-sdk:holds:';
  const timeoutMs = given.timeoutMs ?? 500;
  /** The account hash, and the ledger's holds hash: both carry the account's hash tag. */
  const keysOf = (l: HoldLedger): { keys: [string, string]; ledger: string } => {
    const base = tagged(prefix, l.account);
    const ledger = ledgerKey(l);
    return { keys: [`${base}:a`, `${base}:h:${ledger}`], ledger };
  };
  const run = (step: string, script: string, keys: string[], args: (string | number)[]) =>
    evalScript(runner, script, keys, args, timeoutMs).catch((error: unknown) => {
      throw storeFailure(`${OPERATION}.${step}`, error);
    });
  /** `{held, balance}` as SETTLE and RELEASE answer it. */
  const freed = (step: string, reply: unknown): HoldStoreFree => {
    const [held, raw] = Array.isArray(reply) ? reply : [];
    const text = raw === null || raw === undefined ? null : replyText(raw);
    const balance = text === null ? null : Number(text);
    if (
      (held !== 0 && held !== 1) ||
      text === undefined ||
      (balance !== null && !Number.isSafeInteger(balance))
    ) {
      throw unexpectedReply(`${OPERATION}.${step}`, reply);
    }
    return { held: held === 1, balance };
  };

  return {
    async reserve(l, hold, balanceTtlMs): Promise<HoldStoreReserve> {
      checkStoreArgs.reserve(OPERATION, l, hold, balanceTtlMs);
      const { keys, ledger } = keysOf(l);
      const reply = await run('reserve', RESERVE, keys, [
        ledger,
        hold.id,
        hold.quantity,
        px(hold.ttlMs),
        px(balanceTtlMs),
        randomUUID(),
        KEEP_MS,
      ]);
      const [rawStatus, value, expired] = Array.isArray(reply) ? reply : [];
      const status = replyText(rawStatus);
      if (typeof expired !== 'number') throw unexpectedReply(`${OPERATION}.reserve`, reply);
      if (status === 'stale') {
        const fence = replyText(value);
        if (fence === undefined) throw unexpectedReply(`${OPERATION}.reserve`, reply);
        return { status, fence, expired };
      }
      if ((status !== 'granted' && status !== 'refused') || typeof value !== 'number') {
        throw unexpectedReply(`${OPERATION}.reserve`, reply);
      }
      return { status, available: value, expired };
    },

    async setBalance(l, balance, fence) {
      checkStoreArgs.setBalance(OPERATION, l, balance, fence);
      const { keys, ledger } = keysOf(l);
      await run('setBalance', SET_BALANCE, [keys[0]], [ledger, balance, fence, KEEP_MS]);
    },

    async settle(l, id, remaining, debited) {
      checkStoreArgs.settle(OPERATION, l, id, remaining, debited);
      const { keys, ledger } = keysOf(l);
      return freed('settle', await run('settle', SETTLE, keys, [ledger, id, remaining, KEEP_MS, debited]));
    },

    async release(l, id) {
      checkStoreArgs.release(OPERATION, l, id);
      const { keys, ledger } = keysOf(l);
      return freed('release', await run('release', RELEASE, keys, [ledger, id]));
    },

    async extend(l, id, ttlMs) {
      checkStoreArgs.extend(OPERATION, l, id, ttlMs);
      const { keys, ledger } = keysOf(l);
      const reply = await run('extend', EXTEND, keys, [ledger, id, px(ttlMs), KEEP_MS]);
      if (reply !== 0 && reply !== 1) throw unexpectedReply(`${OPERATION}.extend`, reply);
      return reply === 1;
    },

    async invalidate(account) {
      checkStoreArgs.invalidate(OPERATION, account);
      await run('invalidate', INVALIDATE, [`${tagged(prefix, account)}:a`], [KEEP_MS]);
    },
  };
}
