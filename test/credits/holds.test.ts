import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  APIUserAbortError,
  type CreditsEvent,
  createCreditHolds,
  createWebhookHandler,
  InvalidRequestError,
  isBillingError,
  memoryHoldStore,
  SettleRefusedError,
  StoreError,
} from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { caught, clientFor, serveFetch, useMockServer } from '../helpers.js';
import { event } from '../webhooks/event.js';

const mock = useMockServer();
const PRODUCT = DEMO.products.aiAssistant.product_code;
const METER = DEMO.meters.credits;
const DEBIT = '/api/usage/credits/debit/';
const BALANCE = '/api/usage/credits/balance/';

let n = 0;
/** An account of the mock's with `balance` credits and no debit yet. */
async function account(
  balance: number,
): Promise<{ account_ref_id: string; product_code: string; meter_code: string }> {
  const account_ref_id = `acct_holds_${n++}`;
  await mock.server.lifecycle.subscribe({ account_ref_id });
  mock.server.store.setBalance(account_ref_id, PRODUCT, METER, balance);
  return { account_ref_id, product_code: PRODUCT, meter_code: METER };
}
const debitsOf = (account: string) =>
  [...mock.server.store.ledger.values()].filter((d) => d.account_ref_id === account);
const balanceOf = (account: string) => mock.server.store.balance(account, PRODUCT, METER);
const count = (path: string) => mock.server.requests.count({ method: path === DEBIT ? 'POST' : 'GET', path });

describe('createCreditHolds', () => {
  it('reserve then settle debits what was used, once, under the hold’s event_key', async () => {
    const ledger = await account(100);
    const holds = createCreditHolds(clientFor(mock.server));
    const r = await holds.reserve({ ...ledger, quantity: 60 });
    if (!r.approved) throw new Error('refused');
    expect(r.available).toBe(40);
    expect(r.hold.event_key).toBe(`hold_${r.hold.id}`);
    expect(r.hold).toMatchObject({ ...ledger, quantity: 60 });
    const result = await r.hold.settle(42);
    expect(result).toEqual({
      approved: true,
      debited: 42,
      remaining_balance: 58,
      event_key: r.hold.event_key,
    });
    expect(debitsOf(ledger.account_ref_id).map((d) => [d.event_key, d.quantity])).toEqual([
      [r.hold.event_key, 42],
    ]);
    // Settled again (a caller unsure of the first): the same result, no second request.
    const before = count(DEBIT);
    expect(await r.hold.settle(42)).toEqual(result);
    expect(count(DEBIT)).toBe(before);
    expect(holds.stats()).toMatchObject({ reserved: 1, settled: 1, open: 0, balanceReads: 1 });
  });

  it('refuses, as a result, what the balance minus the holds of every caller does not cover', async () => {
    const ledger = await account(100);
    const holds = createCreditHolds(clientFor(mock.server));
    const first = await holds.reserve({ ...ledger, quantity: 60 });
    expect(first.approved).toBe(true);
    expect(await holds.reserve({ ...ledger, quantity: 50 })).toEqual({
      approved: false,
      error_code: 'insufficient_credits',
      available: 40,
    });
    if (!first.approved) return;
    await first.hold.release();
    expect((await holds.reserve({ ...ledger, quantity: 100 })).approved).toBe(true);
    expect(debitsOf(ledger.account_ref_id)).toEqual([]);
    expect(holds.stats()).toMatchObject({ reserved: 2, refused: 1, released: 1, open: 1 });
  });

  it('concurrent reservations of one balance share one read of it', async () => {
    const ledger = await account(1_000);
    const holds = createCreditHolds(clientFor(mock.server));
    mock.server.requests.clear();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => holds.reserve({ ...ledger, quantity: 10 })),
    );
    expect(results.every((r) => r.approved)).toBe(true);
    expect(count(BALANCE)).toBe(1);
  });

  it('a shared balance read carries no caller’s signal or timeout: each caller stops waiting on its own', async () => {
    const ledger = await account(100);
    const holds = createCreditHolds(clientFor(mock.server, { maxRetries: 0 }));
    mock.server.faults.add({ method: 'GET', path: BALANCE, delayMs: 300 });
    mock.server.requests.clear();
    const first = new AbortController();
    // The first caller starts the read; a second joins it; the first gives up while it runs.
    const gone = holds.reserve({ ...ledger, quantity: 10 }, { signal: first.signal, timeout: 100 });
    const stays = holds.reserve({ ...ledger, quantity: 20 });
    const late = new AbortController();
    const leaves = holds.reserve({ ...ledger, quantity: 30 }, { signal: late.signal });
    setTimeout(() => first.abort(new Error('caller went away')), 20);
    setTimeout(() => late.abort(), 40);
    const [a, b, c] = await Promise.allSettled([gone, stays, leaves]);
    expect(a.status === 'rejected' && a.reason).toBeInstanceOf(APIUserAbortError);
    expect(c.status === 'rejected' && c.reason).toBeInstanceOf(APIUserAbortError);
    // The other caller's reservation, past the first's timeout, is granted from the one read.
    expect(b).toMatchObject({ status: 'fulfilled', value: { approved: true, available: 80 } });
    expect(count(BALANCE)).toBe(1);
    // An already aborted signal sends nothing.
    const ready = await account(5);
    const error = await caught(() =>
      holds.reserve({ ...ready, quantity: 1 }, { signal: AbortSignal.abort() }),
    );
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(count(BALANCE)).toBe(1);
  });

  it('a settle whose answer was lost is retried by the client under the same event_key: one debit', async () => {
    const ledger = await account(100);
    const holds = createCreditHolds(clientFor(mock.server));
    const r = await holds.reserve({ ...ledger, quantity: 30 });
    if (!r.approved) throw new Error('refused');
    mock.server.faults.add({ method: 'POST', path: DEBIT, reset: 'after' });
    mock.server.requests.clear();
    const result = await r.hold.settle(25);
    expect(result).toMatchObject({ approved: true, debited: 25, remaining_balance: 75 });
    expect(count(DEBIT)).toBe(2);
    expect(debitsOf(ledger.account_ref_id)).toHaveLength(1);
    expect(balanceOf(ledger.account_ref_id)).toBe(75);
  });

  it('a settle that failed keeps the hold: settled again with the same used, it debits once', async () => {
    const ledger = await account(100);
    const holds = createCreditHolds(clientFor(mock.server, { maxRetries: 0 }));
    const r = await holds.reserve({ ...ledger, quantity: 30 });
    if (!r.approved) throw new Error('refused');
    mock.server.faults.add({ method: 'POST', path: DEBIT, reset: 'after' });
    expect((await caught(() => r.hold.settle(25))).name).toBe('APIConnectionError');
    // The hold still counts (the debit's outcome was unknown to the caller).
    expect(await holds.reserve({ ...ledger, quantity: 71 })).toMatchObject({
      approved: false,
      available: 70,
    });
    expect((await caught(() => r.hold.settle(24))).message).toMatch(/settled with 25/);
    expect(await r.hold.settle(25)).toMatchObject({ approved: true, debited: 25, remaining_balance: 75 });
    expect(debitsOf(ledger.account_ref_id)).toHaveLength(1);
    expect(balanceOf(ledger.account_ref_id)).toBe(75);
  });

  it('settle(0) frees the hold without a debit; release after a settle and settle after a release are refused', async () => {
    const ledger = await account(100);
    const holds = createCreditHolds(clientFor(mock.server));
    const r = await holds.reserve({ ...ledger, quantity: 30 });
    if (!r.approved) throw new Error('refused');
    mock.server.requests.clear();
    expect(await r.hold.settle(0)).toEqual({
      approved: true,
      debited: 0,
      remaining_balance: 100,
      event_key: r.hold.event_key,
    });
    expect(count(DEBIT)).toBe(0);
    expect(await caught(() => r.hold.release())).toBeInstanceOf(InvalidRequestError);
    const other = await holds.reserve({ ...ledger, quantity: 100 });
    if (!other.approved) throw new Error('refused');
    await other.hold.release();
    await other.hold.release(); // a second release is nothing
    const error = await caught(() => other.hold.settle(1));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.message).toMatch(/released/);
    expect(debitsOf(ledger.account_ref_id)).toEqual([]);
  });

  it('a hold not settled in its ttlMs comes back; settled later it still debits, and may be refused', async () => {
    let now = 1_000_000;
    const ledger = await account(50);
    const holds = createCreditHolds(clientFor(mock.server), {
      store: memoryHoldStore({ now: () => now }),
      balanceTtlMs: 10_000_000,
    });
    const lost = await holds.reserve({ ...ledger, quantity: 50, ttlMs: 1_000 });
    if (!lost.approved) throw new Error('refused');
    expect((await holds.reserve({ ...ledger, quantity: 1 })).approved).toBe(false);
    now += 1_001;
    const next = await holds.reserve({ ...ledger, quantity: 50 });
    if (!next.approved) throw new Error('refused');
    expect(holds.stats().expired).toBe(1);
    await next.hold.settle(50);
    expect(await lost.hold.settle(10)).toMatchObject({
      approved: false,
      error_code: 'insufficient_credits',
      remaining_balance: 0,
    });
    expect(debitsOf(ledger.account_ref_id).map((d) => d.quantity)).toEqual([50]);
  });

  it('a settle the service refuses is heard: onError gets a SettleRefusedError, stats count it unpaid, not settled', async () => {
    const ledger = await account(50);
    const errors: unknown[] = [];
    const holds = createCreditHolds(clientFor(mock.server), { onError: (e) => errors.push(e) });
    const r = await holds.reserve({ ...ledger, quantity: 40 });
    if (!r.approved) throw new Error('refused');
    // The balance is spent outside the holds while the action runs.
    await clientFor(mock.server).usage.debit({ ...ledger, quantity: 45 });
    // The caller still gets the refusal as its result…
    const seen: CreditsEvent[] = [];
    const listener = (message: unknown) => seen.push(message as CreditsEvent);
    subscribe('billing-sdk:credits', listener);
    const result = await r.hold.settle(30).finally(() => unsubscribe('billing-sdk:credits', listener));
    expect(seen).toEqual([{ event: 'unpaid', quantity: 30 }]);
    expect(result).toMatchObject({
      approved: false,
      error_code: 'insufficient_credits',
      remaining_balance: 5,
    });
    // …and the app hears of the unpaid work, with all it needs to collect it.
    expect(errors).toHaveLength(1);
    const error = errors[0];
    expect(error).toBeInstanceOf(SettleRefusedError);
    expect(isBillingError(error, 'SettleRefusedError')).toBe(true);
    expect(error).toMatchObject({
      name: 'SettleRefusedError',
      account_ref_id: ledger.account_ref_id,
      product_code: PRODUCT,
      meter_code: METER,
      used: 30,
      event_key: r.hold.event_key,
      error_code: 'insufficient_credits',
      remaining_balance: 5,
    });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ used: 30, event_key: r.hold.event_key });
    expect(holds.stats()).toMatchObject({ reserved: 1, settled: 0, unpaid: 1, open: 0 });
    // Asked again, the same answer, and nothing told twice.
    expect(await r.hold.settle(30)).toEqual(result);
    expect(errors).toHaveLength(1);
    expect(holds.stats()).toMatchObject({ settled: 0, unpaid: 1 });
  });

  it('a debit made outside the holds is seen once the balance is older than balanceTtlMs', async () => {
    let now = 1_000_000;
    const ledger = await account(100);
    const holds = createCreditHolds(clientFor(mock.server), {
      store: memoryHoldStore({ now: () => now }),
      balanceTtlMs: 5_000,
    });
    expect((await holds.reserve({ ...ledger, quantity: 10 })).approved).toBe(true);
    await clientFor(mock.server).usage.debit({ ...ledger, quantity: 80 });
    expect((await holds.reserve({ ...ledger, quantity: 80 })).approved).toBe(true); // not seen yet: the documented gap
    now += 5_000;
    expect(await holds.reserve({ ...ledger, quantity: 1 })).toEqual({
      approved: false,
      error_code: 'insufficient_credits',
      available: 0,
    });
    expect(holds.stats().balanceReads).toBe(2);
  });

  it('a top-up is seen at once through the webhook handler’s holds option', async () => {
    const ledger = await account(10);
    const holds = createCreditHolds(clientFor(mock.server));
    expect((await holds.reserve({ ...ledger, quantity: 10 })).approved).toBe(true);
    mock.server.store.setBalance(ledger.account_ref_id, PRODUCT, METER, 110);
    expect((await holds.reserve({ ...ledger, quantity: 100 })).approved).toBe(false);
    const receiver = await serveFetch(createWebhookHandler({ holds, onEvent: () => {} }));
    try {
      const response = await fetch(`${receiver.url}/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(event({ account_ref_id: ledger.account_ref_id })),
      });
      expect(response.status).toBe(200);
    } finally {
      await receiver.close();
    }
    expect(await holds.reserve({ ...ledger, quantity: 100 })).toMatchObject({ approved: true, available: 0 });
  });

  it('a webhook whose holds invalidation fails is answered 500, so the sender retries', async () => {
    const failing = { invalidate: () => Promise.reject(new StoreError('unavailable', 'down')) };
    const receiver = await serveFetch(createWebhookHandler({ holds: failing, onEvent: () => {} }));
    try {
      const response = await fetch(`${receiver.url}/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(event({ account_ref_id: 'acct_active' })),
      });
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ error: 'credit holds invalidation failed' });
    } finally {
      await receiver.close();
    }
  });

  it('a store that fails fails the reservation (never open); one that fails after a debit leaves the result', async () => {
    const ledger = await account(100);
    const down = new StoreError('unavailable', 'store down');
    const store = memoryHoldStore();
    const errors: unknown[] = [];
    const failing = { ...store, reserve: () => Promise.reject(down) };
    const holds = createCreditHolds(clientFor(mock.server), { store: failing });
    expect(await caught(() => holds.reserve({ ...ledger, quantity: 1 }))).toBe(down);
    const flaky = { ...store, settle: () => Promise.reject(down) };
    const other = createCreditHolds(clientFor(mock.server), { store: flaky, onError: (e) => errors.push(e) });
    const r = await other.reserve({ ...ledger, quantity: 10 });
    if (!r.approved) throw new Error('refused');
    expect(await r.hold.settle(10)).toMatchObject({ approved: true, debited: 10 });
    expect(errors).toEqual([down]);
  });

  it('a balance stale again after every read (invalidated each time) fails with StoreError after 3 reads, granting nothing', async () => {
    const ledger = await account(100);
    const store = memoryHoldStore();
    // Every read is answered by an invalidation of the account before its balance is recorded.
    const stormy = {
      ...store,
      setBalance: async (...args: Parameters<typeof store.setBalance>) => {
        await store.invalidate(args[0].account);
        await store.setBalance(...args);
      },
    };
    const holds = createCreditHolds(clientFor(mock.server), { store: stormy });
    mock.server.requests.clear();
    const error = await caught(() => holds.reserve({ ...ledger, quantity: 1 }));
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toMatch(/stale again after each of 3 reads/);
    expect(mock.server.requests.count({ method: 'GET', path: BALANCE })).toBe(3);
    expect(holds.stats()).toMatchObject({ reserved: 0, balanceReads: 3 });
  });

  it('publishes each step on billing-sdk:credits, never an account or a key', async () => {
    const ledger = await account(20);
    const seen: CreditsEvent[] = [];
    const listener = (message: unknown) => seen.push(message as CreditsEvent);
    subscribe('billing-sdk:credits', listener);
    try {
      const holds = createCreditHolds(clientFor(mock.server));
      const a = await holds.reserve({ ...ledger, quantity: 15 });
      await holds.reserve({ ...ledger, quantity: 15 });
      if (!a.approved) throw new Error('refused');
      await a.hold.settle(5);
      const b = await holds.reserve({ ...ledger, quantity: 15 });
      if (b.approved) await b.hold.release();
    } finally {
      unsubscribe('billing-sdk:credits', listener);
    }
    expect(seen).toEqual([
      { event: 'balance' },
      { event: 'reserve', quantity: 15 },
      { event: 'refuse', quantity: 15 },
      { event: 'settle', quantity: 5 },
      { event: 'reserve', quantity: 15 },
      { event: 'release' },
    ]);
    expect(JSON.stringify(seen)).not.toContain(ledger.account_ref_id);
  });
});

describe('createCreditHolds: bad input is refused before anything is sent', () => {
  it('options and the client', async () => {
    const billing = clientFor(mock.server);
    expect(() => createCreditHolds({} as never)).toThrow(InvalidRequestError);
    expect(() => createCreditHolds(billing, { ttlMs: 0 })).toThrow(/options.ttlMs/);
    expect(() => createCreditHolds(billing, { balanceTtlMs: 1.5 })).toThrow(/options.balanceTtlMs/);
    expect(() => createCreditHolds(billing, { store: {} as never })).toThrow(/options.store/);
    expect(() => createCreditHolds(billing, { ttl: 5 } as never)).toThrow(/options.ttl/);
  });

  it('reserve parameters, by property: anything but a positive integer quantity and non-empty names', async () => {
    const holds = createCreditHolds(clientFor(mock.server));
    mock.server.requests.clear();
    const bad = fc.oneof(
      fc.record({
        quantity: fc.oneof(
          fc.integer({ max: 0 }),
          fc.double({ noInteger: true }),
          fc.string(),
          fc.constant(null),
        ),
      }),
      fc.record({ account_ref_id: fc.constantFrom('', 7, undefined, '\ud800') }),
      fc.record({
        ttlMs: fc.oneof(fc.integer({ max: 0 }), fc.constant(2 ** 31), fc.double({ noInteger: true })),
      }),
      fc.record({ unknown_param: fc.anything() }),
    );
    await fc.assert(
      fc.asyncProperty(bad, async (patch) => {
        const params = {
          account_ref_id: 'acct_active',
          product_code: PRODUCT,
          meter_code: METER,
          quantity: 1,
          ...patch,
        };
        const error = await caught(() => holds.reserve(params as never));
        expect(error).toBeInstanceOf(InvalidRequestError);
      }),
      { numRuns: 60 },
    );
    expect(mock.server.requests.count()).toBe(0);
  });

  it('request options are checked before anything is sent, even when no request is needed', async () => {
    const ledger = await account(100);
    const holds = createCreditHolds(clientFor(mock.server));
    const r = await holds.reserve({ ...ledger, quantity: 10 });
    if (!r.approved) throw new Error('refused');
    mock.server.requests.clear();
    // The balance is known now: this reservation would send nothing, and is refused all the same.
    expect((await caught(() => holds.reserve({ ...ledger, quantity: 1 }, { timeout: -1 }))).message).toMatch(
      /options.timeout/,
    );
    expect((await caught(() => holds.reserve({ ...ledger, quantity: 1 }, 'fast' as never))).message).toMatch(
      /options/,
    );
    expect((await caught(() => r.hold.settle(0, { retries: 3 } as never))).message).toMatch(
      /options.retries/,
    );
    expect(mock.server.requests.count()).toBe(0);
    expect(holds.stats()).toMatchObject({ reserved: 1, open: 1 });
  });

  it('settle: used must be an integer from 0 to the quantity', async () => {
    const ledger = await account(100);
    const holds = createCreditHolds(clientFor(mock.server));
    const r = await holds.reserve({ ...ledger, quantity: 10 });
    if (!r.approved) throw new Error('refused');
    mock.server.requests.clear();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.integer({ min: 11 }),
          fc.integer({ max: -1 }),
          fc.double({ noInteger: true }),
          fc.string(),
        ),
        async (used) => {
          expect(await caught(() => r.hold.settle(used as number))).toBeInstanceOf(InvalidRequestError);
        },
      ),
      { numRuns: 40 },
    );
    expect(mock.server.requests.count()).toBe(0);
    expect(await r.hold.settle(10)).toMatchObject({ approved: true, debited: 10 });
  });
});
