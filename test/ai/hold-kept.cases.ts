import { describe, expect, it } from 'vitest';
import { createCreditHolds, memoryHoldStore } from '../../src/index.js';
import { withTestClock } from '../../src/util/clock.js';
import { steppedClock } from '../stepped-clock.js';
import { account, CREDITS, charged, DEFAULT_COST, meterFor, openaiOn, useServices } from './support.js';

// A call's hold in 'hold' mode lives while the call does: extended every third of its ttl while its
// stream is read, let go (its ttl then ends it) once nobody reads. Time is a clock the test moves.
const s = useServices();
const openai = () => openaiOn(s);
const ask = {
  model: 'gpt-fake',
  messages: [{ role: 'user' as const, content: 'Hello there' }],
  stream: true as const,
};
const T0 = 1_000_000;

function setup() {
  const clock = steppedClock(T0);
  const holds = createCreditHolds(
    s.billing,
    withTestClock({ store: memoryHoldStore({ now: clock.now }), ttlMs: 300 }, clock),
  );
  const meter = meterFor(s.billing, 'hold', { holds, maxQuantity: 60 });
  return { clock, holds, meter };
}

const reserve = (holds: ReturnType<typeof createCreditHolds>, account_ref_id: string) =>
  holds.reserve({ account_ref_id, ...CREDITS, quantity: 60 });

describe("'hold' mode: a call's hold outlives its ttl while the call runs", () => {
  it('ttlMs 300, a stream read for 450 ms: a reservation then does not get its credits', async () => {
    const acct = await account(s.mock, 100);
    const { clock, holds, meter } = setup();
    const it = (await meter.openai(openai(), { account_ref_id: acct }).chat.completions.create(ask))[
      Symbol.asyncIterator
    ]();
    for (const at of [100, 200, 300, 400, 450]) {
      await it.next();
      await clock.advanceTo(T0 + at);
    }
    expect(await reserve(holds, acct)).toMatchObject({ approved: false, available: 40 });
    while (!(await it.next()).done);
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
    expect(holds.stats()).toMatchObject({ settled: 1, expired: 0, open: 0 });
    expect(clock.pending).toBe(0); // the keeping stopped with the charge
  });

  it('a stream nobody reads is let go: its hold ends with its ttl', async () => {
    const acct = await account(s.mock, 100);
    const { clock, holds, meter } = setup();
    const stream = await meter.openai(openai(), { account_ref_id: acct }).chat.completions.create(ask);
    await clock.advanceTo(T0 + 450);
    expect(await reserve(holds, acct)).toMatchObject({ approved: true });
    stream.controller.abort();
    expect(clock.pending).toBe(0);
  });
});
