import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccessCache, createCreditHolds, createGate, memoryHoldStore } from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { withTestClock } from '../../src/util/clock.js';
import { clientFor, type LoopbackServer, serveNode, until, useMockServer } from '../helpers.js';
import { steppedClock } from '../stepped-clock.js';
import { AI } from './helpers.js';

// The gate's hold: true keeps its hold while the handler runs (extended every third of its ttl),
// so an action longer than the ttl keeps its credits; the keeping stops once the hold is settled.
// Time is a clock the test moves (the holds' and the memory store's), nothing sleeps.
const mock = useMockServer();
const METER = DEMO.meters.credits;

describe('the gate’s hold: true keeps its hold while the handler runs', () => {
  let served: LoopbackServer | undefined;
  afterEach(() => served?.close());

  it('ttlMs 300, a handler of 600 ms: a reservation at 450 ms does not get the same credits; the keeping stops at the settle', async () => {
    const account = `acct_gate_kept_${Date.now()}`;
    await mock.server.lifecycle.subscribe({ account_ref_id: account });
    mock.server.store.setBalance(account, AI, METER, 100);
    const T0 = 1_000_000;
    const clock = steppedClock(T0);
    const billing = clientFor(mock.server, { maxRetries: 0 });
    const holds = createCreditHolds(
      billing,
      withTestClock({ store: memoryHoldStore({ now: clock.now }), ttlMs: 300 }, clock),
    );
    const gate = createGate<express.Request>({
      billing,
      access: createAccessCache(billing),
      holds,
      account: (req) => req.get('x-account'),
    });
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const app = express();
    app.post(
      '/job',
      gate.express({ credits: { product_code: AI, meter_code: METER, quantity: 100, hold: true } }),
      async (_req, res) => {
        started();
        await finished;
        res.json({ done: true });
      },
    );
    served = await serveNode(app);
    const answer = fetch(`${served.url}/job`, { method: 'POST', headers: { 'x-account': account } });
    await running;
    expect(holds.stats()).toMatchObject({ reserved: 1, open: 1 });

    await clock.advanceTo(T0 + 450);
    const second = await holds.reserve({
      account_ref_id: account,
      product_code: AI,
      meter_code: METER,
      quantity: 100,
    });
    expect(second).toEqual({ approved: false, error_code: 'insufficient_credits', available: 0 });

    await clock.advanceTo(T0 + 600);
    finish();
    expect((await answer).status).toBe(200);
    await until(() => holds.stats().settled === 1);
    expect(mock.server.store.balance(account, AI, METER)).toBe(0);
    expect(holds.stats()).toMatchObject({ reserved: 1, refused: 1, settled: 1, expired: 0, open: 0 });
    expect(clock.pending).toBe(0); // no beat left waiting: the keeping stopped
  });
});
