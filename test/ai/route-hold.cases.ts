import { describe, expect, it } from 'vitest';
import type { GateHold } from '../../src/index.js';
import { account, charged, DEFAULT_COST, meterFor, openaiOn, useServices } from './support.js';

const s = useServices();
const openai = () => openaiOn(s);
const ask = {
  model: 'gpt-fake',
  messages: [{ role: 'user' as const, content: 'Hello there' }],
  stream: true as const,
};

/** A route's hold of `quantity` as a handler holds it: what it was told to settle, last first. */
function routeHold(quantity: number): GateHold & { told: number[] } {
  const told: number[] = [];
  return {
    quantity,
    event_key: 'route_1',
    credit: undefined as never,
    told,
    use(used: number) {
      told.unshift(used);
    },
  };
}

describe('calls charged against a route hold', () => {
  it('a price function failing on a running estimate never breaks the stream: the call is charged at its end', async () => {
    const acct = await account(s.mock);
    const hold = routeHold(100);
    // Wrong for anything but the provider's own report (12 input tokens): a bug of the app's.
    const meter = meterFor(s.billing, 'debit', {
      maxQuantity: 50,
      price: (u) => (u.input === 12 ? u.input * 0.5 + u.output * 2 : Number.NaN),
    });
    const client = meter.openai(openai(), { account_ref_id: acct, hold });
    let text = '';
    for await (const chunk of await client.chat.completions.create(ask))
      text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('w0 w1 w2 w3 w4 w5 ');
    expect(hold.told[0]).toBe(DEFAULT_COST);
    expect(charged(s.mock, acct).total).toBe(0); // the gate settles the route's hold, not the meter
  });
});

describe('concurrent calls on one route hold', () => {
  it('the running total counts every stream under way, not the last one heard', async () => {
    const acct = await account(s.mock);
    const hold = routeHold(100);
    const meter = meterFor(s.billing, 'debit', { maxQuantity: 40 });
    const client = meter.openai(openai(), { account_ref_id: acct, hold });
    const a = (await client.chat.completions.create(ask))[Symbol.asyncIterator]();
    const b = (await client.chat.completions.create(ask))[Symbol.asyncIterator]();
    // The role chunk, 'w0 ', 'w1 ' of each: 4 input tokens estimated (2) and 2 output tokens (4).
    for (let i = 0; i < 3; i++) {
      await a.next();
      await b.next();
    }
    expect(hold.told[0]).toBe(12);
    await a.return?.();
    await b.return?.();
    expect(hold.told[0]).toBe(12);
  });
});

describe('a call costing more than its route hold has left', () => {
  it('the rest is debited under a derived key, once, and told to onError', async () => {
    const acct = await account(s.mock);
    const hold = routeHold(10);
    const errors: unknown[] = [];
    const meter = meterFor(s.billing, 'debit', { onError: (_, context) => errors.push(context) });
    const client = meter.openai(openai(), { account_ref_id: acct, hold, event_key: 'req-9' });
    // Bound: 4 output tokens (8) + 'user', 'Hello there' estimated 4 tokens (2) = 10, all the hold has.
    // Used: 12 input tokens (6) + 4 output tokens (8) = 14.
    await client.chat.completions.create({ ...ask, stream: false, max_completion_tokens: 4 });
    expect(hold.told[0]).toBe(10);
    expect(charged(s.mock, acct)).toMatchObject({ total: 4, keys: ['req-9_over'] });
    expect(errors).toEqual([expect.objectContaining({ kind: 'overrun', event_key: 'req-9', quantity: 14 })]);
  });
});
