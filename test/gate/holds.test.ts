import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CreditHolds,
  createCreditHolds,
  createGate,
  InvalidRequestError,
  memoryHoldStore,
  SettleRefusedError,
  StoreError,
} from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { serveNode, until, useMockServer } from '../helpers.js';
import {
  A,
  AI,
  ask,
  credits,
  expectProblem,
  FRAMEWORKS,
  type Need,
  type Served,
  setupFor,
} from './helpers.js';

// A credits need with hold: true through each adapter: reserved before the handler, settled with
// what the handler used after a 2xx (all of it when it said nothing), released otherwise.
const mock = useMockServer();
const METER = DEMO.meters.credits;
const HOLD = (quantity: number): Need => ({
  credits: { product_code: AI, meter_code: METER, quantity, hold: true },
});

let n = 0;
/** A subscribed account of the mock's with `balance` credits on ai-assistant. */
async function account(balance: number): Promise<string> {
  const id = `acct_gate_hold_${n++}`;
  await mock.server.lifecycle.subscribe({ account_ref_id: id });
  mock.server.store.setBalance(id, AI, METER, balance);
  return id;
}
const debitsOf = (id: string) =>
  [...mock.server.store.ledger.values()].filter((d) => d.account_ref_id === id);
const balanceOf = (id: string) => mock.server.store.balance(id, AI, METER);

describe.each(FRAMEWORKS)('credit holds through $name', (framework) => {
  let open: Served[] = [];
  afterEach(async () => {
    await Promise.all(open.map((s) => s.close()));
    open = [];
  });
  const start = async (
    need: Need | Need[],
    holds?: CreditHolds,
  ): Promise<{ served: Served; holds: CreditHolds }> => {
    const setup = setupFor(mock.server);
    const h = holds ?? createCreditHolds(setup.billing);
    const served = await framework.serve({ ...setup, holds: h }, { need });
    open.push(served);
    return { served, holds: h };
  };
  /** Waits until the gate freed every hold it made (settled or released). */
  const freed = (holds: CreditHolds) => until(() => holds.stats().open === 0 && holds.stats().reserved > 0);

  it('a 2xx settles what the handler used; without use(), the whole hold', async () => {
    const id = await account(100);
    const { served, holds } = await start(HOLD(30));
    expect((await ask(served, { account: id, headers: { 'x-use': '12' } })).status).toBe(200);
    await freed(holds);
    expect((await ask(served, { account: id, status: 201 })).status).toBe(201);
    await until(() => holds.stats().settled === 2);
    expect(
      debitsOf(id)
        .map((d) => d.quantity)
        .sort(),
    ).toEqual([12, 30]);
    expect(balanceOf(id)).toBe(100 - 42);
  });

  it('a 500, a throwing handler and a refused request debit nothing and free the hold', async () => {
    const id = await account(30);
    const { served, holds } = await start(HOLD(30));
    expect((await ask(served, { account: id, status: 500, headers: { 'x-use': '5' } })).status).toBe(500);
    await until(() => holds.stats().released === 1);
    expect((await ask(served, { account: id, throws: true })).status).toBe(500);
    await until(() => holds.stats().released === 2);
    expect((await ask(served, { account: await account(29) })).status).toBe(402);
    expect(debitsOf(id)).toEqual([]);
    expect(holds.stats()).toMatchObject({ reserved: 2, released: 2, open: 0 });
    // All of it is free again.
    expect((await ask(served, { account: id })).status).toBe(200);
  });

  it('refuses 402 insufficient_credits with what is available while other requests hold the rest', async () => {
    const id = await account(50);
    const holds = createCreditHolds(setupFor(mock.server).billing);
    const held = await holds.reserve({
      account_ref_id: id,
      product_code: AI,
      meter_code: METER,
      quantity: 40,
    });
    const { served } = await start(HOLD(20), holds);
    const answer = await ask(served, { account: id });
    expect(expectProblem(answer, 402, 'insufficient_credits')).toMatchObject({ remaining_balance: 10 });
    expect(debitsOf(id)).toEqual([]);
    if (held.approved) await held.hold.release();
  });

  it('the same Idempotency-Key twice settles once: the reuse is refused 422, its handler never runs', async () => {
    const id = await account(100);
    const { served, holds } = await start(HOLD(10));
    const key = `key-${id}`;
    expect((await ask(served, { account: id, idempotencyKey: key, headers: { 'x-use': '7' } })).status).toBe(
      200,
    );
    await until(() => holds.stats().settled === 1);
    const reuse = await ask(served, { account: id, idempotencyKey: key, headers: { 'x-use': '7' } });
    expectProblem(reuse, 422, 'idempotency_key_used');
    expect(served.handled).toBe(1);
    const debits = debitsOf(id);
    expect(debits.map((d) => d.quantity)).toEqual([7]);
    expect(debits[0]?.event_key).not.toBe(key);
    expect(balanceOf(id)).toBe(93);
  });

  it('a request that failed (500) runs again under its key, and settles once', async () => {
    const id = await account(100);
    const { served, holds } = await start(HOLD(10));
    const key = `retry-${id}`;
    expect((await ask(served, { account: id, idempotencyKey: key, status: 500 })).status).toBe(500);
    await until(() => holds.stats().released === 1);
    const retry = await ask(served, { account: id, idempotencyKey: key, headers: { 'x-use': '4' } });
    expect(retry.status).toBe(200);
    await until(() => holds.stats().settled === 1);
    expect(served.handled).toBe(2);
    expect(debitsOf(id).map((d) => d.quantity)).toEqual([4]);
    expect(balanceOf(id)).toBe(96);
  });

  it('a store that fails answers 503 (never open), and lets no handler run', async () => {
    const id = await account(100);
    const down = {
      ...memoryHoldStore(),
      reserve: () => Promise.reject(new StoreError('unavailable', 'down')),
    };
    const { served } = await start(
      HOLD(10),
      createCreditHolds(setupFor(mock.server).billing, { store: down }),
    );
    expectProblem(await ask(served, { account: id }), 503, 'unavailable');
    expect(served.handled).toBe(0);
  });

  it('several credits needs, the second refused: all reserved first, all given back, nothing debited', async () => {
    const id = await account(12);
    const { served, holds } = await start([credits(5), credits(10)]);
    expectProblem(await ask(served, { account: id }), 402, 'insufficient_credits');
    // Retried without a key, as a client does: each "no" costs nothing.
    expectProblem(await ask(served, { account: id }), 402, 'insufficient_credits');
    expect(debitsOf(id)).toEqual([]);
    expect(balanceOf(id)).toBe(12);
    expect(holds.stats()).toMatchObject({ reserved: 2, refused: 2, released: 2, open: 0 });
    expect(served.handled).toBe(0);
  });

  it("a plain credits need goes through the gate's holds: it never spends what a hold reserved", async () => {
    const id = await account(12);
    const { served, holds } = await start(credits(5));
    // An AI call holds 10 of the 12 meanwhile.
    const ai = await holds.reserve({ account_ref_id: id, product_code: AI, meter_code: METER, quantity: 10 });
    if (!ai.approved) throw new Error('expected a hold');
    const refused = await ask(served, { account: id });
    expect(expectProblem(refused, 402, 'insufficient_credits')).toMatchObject({ remaining_balance: 2 });
    expect(debitsOf(id)).toEqual([]);
    // The hold settles in full: its work is paid.
    expect(await ai.hold.settle(10)).toMatchObject({ approved: true, debited: 10, remaining_balance: 2 });
    mock.server.store.setBalance(id, AI, METER, 100);
    await holds.invalidate(id);
    // Once enough is available the plain need is reserved and settled at once: one debit, nothing held.
    expect((await ask(served, { account: id })).status).toBe(200);
    expect(debitsOf(id).map((d) => d.quantity)).toEqual([10, 5]);
    expect(holds.stats()).toMatchObject({ settled: 2, open: 0 });
  });

  it('a give-back the store fails on a "no": still the 402, the failure told to onError', async () => {
    const id = await account(12);
    const store = memoryHoldStore();
    const failing = {
      ...store,
      release: () => Promise.reject(new StoreError('unavailable', 'down')),
    };
    const setup = setupFor(mock.server);
    const holds = createCreditHolds(setup.billing, { store: failing });
    const errors: unknown[] = [];
    const served = await framework.serve(
      { ...setup, holds, onError: (error) => errors.push(error) },
      { need: [HOLD(10), credits(50)] },
    );
    open.push(served);
    expectProblem(await ask(served, { account: id }), 402, 'insufficient_credits');
    expect(errors).toEqual([expect.any(StoreError)]);
    expect(served.handled).toBe(0);
    expect(debitsOf(id)).toEqual([]);
  });
});

describe('credit holds in createGate', () => {
  it('a hold need without the holds option, two in a route, or several credits needs without holds, is refused when the route is made', async () => {
    const setup = setupFor(mock.server);
    const gate = createGate({ billing: setup.billing, access: setup.access, account: () => A });
    expect(() => gate.hono(HOLD(1))).toThrow(/need.credits.hold needs the gate option holds/);
    const withHolds = createGate({
      billing: setup.billing,
      access: setup.access,
      account: () => A,
      holds: createCreditHolds(setup.billing),
    });
    expect(() => withHolds.hono([HOLD(1), HOLD(2)])).toThrow(InvalidRequestError);
    // Without holds, a second credits need could be refused after the first was debited.
    for (const make of [
      () => gate.hono([credits(5), credits(10)]),
      () => gate.express([credits(5), credits(10)]),
      () => gate.fastify([credits(5), credits(10)]),
      () => gate.protect([credits(5), credits(10)], () => new Response('ok')),
    ]) {
      expect(make).toThrow(/need has several credits needs: give the gate the option holds/);
    }
    await expect(gate.check(new Request('http://app.local/'), [credits(5), credits(10)])).rejects.toThrow(
      /several credits needs/,
    );
    expect(() => withHolds.hono([credits(5), HOLD(10)])).not.toThrow();
    expect(() =>
      withHolds.hono({ credits: { product_code: AI, meter_code: METER, quantity: 1, hold: 'yes' as never } }),
    ).toThrow(/need.credits.hold/);
  });

  it('use() outside 0..quantity throws InvalidRequestError in the handler; gate.check leaves the hold to the caller, and use() there throws', async () => {
    const id = await account(100);
    const setup = setupFor(mock.server);
    const holds = createCreditHolds(setup.billing);
    const gate = createGate({ billing: setup.billing, access: setup.access, account: () => id, holds });
    const decision = await gate.check(new Request('http://app.local/'), HOLD(10));
    if (!decision.allowed || !decision.hold) throw new Error('expected a hold');
    expect(() => decision.hold?.use(11)).toThrow(InvalidRequestError);
    expect(() => decision.hold?.use(-1)).toThrow(InvalidRequestError);
    expect(decision.hold.quantity).toBe(10);
    // Nothing settles under check: use() would be heard by nobody, so it says so.
    expect(() => decision.hold?.use(4)).toThrow(/gate.check, which settles nothing/);
    expect(holds.stats().open).toBe(1);
    expect(await decision.hold.credit.settle(4)).toMatchObject({ approved: true, debited: 4 });
    expect(balanceOf(id)).toBe(96);
  });

  it('a settle the service refuses after a 2xx reaches the gate’s onError and the holds’ as a SettleRefusedError', async () => {
    const id = await account(30);
    const setup = setupFor(mock.server);
    const heard: unknown[] = [];
    const told: unknown[] = [];
    const holds = createCreditHolds(setup.billing, { onError: (e) => heard.push(e) });
    const gate = createGate<express.Request>({
      billing: setup.billing,
      access: setup.access,
      account: () => id,
      holds,
      onError: (e) => told.push(e),
    });
    const app = express();
    // The handler's work is done, but the balance is spent elsewhere meanwhile.
    app.post('/work', gate.express(HOLD(20)), async (_req, res) => {
      await setup.billing.usage.debit({
        account_ref_id: id,
        product_code: AI,
        meter_code: METER,
        quantity: 25,
      });
      res.json({ done: true });
    });
    const server = await serveNode(app);
    try {
      expect((await fetch(`${server.url}/work`, { method: 'POST' })).status).toBe(200);
      await until(() => told.length === 1);
      const fields = {
        name: 'SettleRefusedError',
        account_ref_id: id,
        product_code: AI,
        meter_code: METER,
        used: 20,
        error_code: 'insufficient_credits',
        remaining_balance: 5,
      };
      expect(told[0]).toBeInstanceOf(SettleRefusedError);
      expect(told[0]).toMatchObject(fields);
      expect(heard).toHaveLength(1);
      expect(heard[0]).toMatchObject({ ...fields, event_key: (told[0] as SettleRefusedError).event_key });
      expect(holds.stats()).toMatchObject({ reserved: 1, settled: 0, unpaid: 1, open: 0 });
    } finally {
      await server.close();
    }
  });

  it('Express: a client gone before the answer releases the hold (nothing debited)', async () => {
    const id = await account(100);
    const setup = setupFor(mock.server);
    const holds = createCreditHolds(setup.billing);
    const gate = createGate<express.Request>({
      billing: setup.billing,
      access: setup.access,
      account: () => id,
      holds,
    });
    let reached!: () => void;
    const inHandler = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const app = express();
    // The handler never answers: the client gives up first.
    app.post('/slow', gate.express(HOLD(30)), () => reached());
    const server = await serveNode(app);
    try {
      const aborted = new AbortController();
      const sent = fetch(`${server.url}/slow`, { method: 'POST', signal: aborted.signal }).catch(
        () => 'aborted',
      );
      await inHandler;
      expect(holds.stats()).toMatchObject({ reserved: 1, open: 1 });
      aborted.abort();
      expect(await sent).toBe('aborted');
      await until(() => holds.stats().released === 1);
      expect(holds.stats()).toMatchObject({ settled: 0, open: 0 });
      expect(debitsOf(id)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
