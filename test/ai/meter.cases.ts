import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AIEvent, createAIMeter } from '../../src/ai/index.js';
import { InvalidRequestError } from '../../src/index.js';
import { account, CALLS, CREDITS, charged, meterFor, openaiOn, PRICE, useServices } from './support.js';

const s = useServices();
const openai = () => openaiOn(s);
const ask = { model: 'gpt-fake', messages: [{ role: 'user' as const, content: 'Hello there' }] };

describe('createAIMeter', () => {
  it('refuses bad options with a typed error naming them, before anything is sent', () => {
    const base = { billing: s.billing, ...CREDITS, price: PRICE };
    const bad: [unknown, string][] = [
      [{ ...base, price: { input: -1, output: 1 } }, 'options.price.input'],
      [{ ...base, price: { output: 1 } }, 'options.price.input'],
      [{ ...base, price: { input: 1, output: 1, cached: 1 } }, 'options.price.cached'],
      [{ ...base, charge: 'later' }, 'options.charge'],
      [{ ...base, maxQuantity: 0 }, 'options.maxQuantity'],
      [{ ...base, billing: {} }, 'options.billing'],
      [{ ...base, product_code: '' }, 'options.product_code'],
      [{ ...base, onError: 1 }, 'options.onError'],
      [{ ...base, extra: 1 }, 'options.extra'],
    ];
    for (const [options, field] of bad) {
      const error = (() => {
        try {
          createAIMeter(options as never);
        } catch (e) {
          return e;
        }
      })();
      expect(error, field).toBeInstanceOf(InvalidRequestError);
      expect(
        (error as InvalidRequestError).issues.map((i) => i.field),
        field,
      ).toContain(field);
    }
    const meter = createAIMeter(base);
    expect(() => meter.openai(openai(), {} as never)).toThrow(/account_ref_id is required/);
    expect(() => meter.openai(openai(), { account_ref_id: 'a', hold: {} as never })).toThrow(/options.hold/);
  });

  it('any price object of finite non-negative numbers is taken; anything else refused', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (input, output) => {
        const ok = [input, output].every((v) => typeof v === 'number' && Number.isFinite(v) && v >= 0);
        const make = () =>
          createAIMeter({ billing: s.billing, ...CREDITS, price: { input, output } as never });
        if (ok) expect(make).not.toThrow();
        else expect(make).toThrow(InvalidRequestError);
      }),
      { numRuns: 50 },
    );
  });

  it('a price function: ceil of its answer; 0 charges nothing and sends nothing', async () => {
    const acct = await account(s.mock);
    const seen: unknown[] = [];
    const meter = meterFor(s.billing, 'debit', {
      price: (usage, call) => {
        seen.push({ usage, model: call.model, operation: call.operation });
        return call.model === 'free' ? 0 : usage.output / 4;
      },
    });
    const client = meter.openai(openai(), { account_ref_id: acct });
    await client.chat.completions.create(ask);
    await client.chat.completions.create({ ...ask, model: 'free' });
    expect(charged(s.mock, acct)).toMatchObject({ total: 2 }); // ceil(6 / 4)
    expect(charged(s.mock, acct).keys).toHaveLength(1);
    expect(seen[0]).toMatchObject({ usage: { input: 12, output: 6 }, operation: 'chat.completions.create' });
    expect(meter.stats()).toMatchObject({
      calls: 2,
      charged: 1,
      quantity: 2,
      tokens: { input: 12, output: 6 },
    });
  });

  it('a call that used tokens is never rounded down to free, however small its price', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit', { price: { input: 1e-12, output: 1e-12 } });
    await meter.openai(openai(), { account_ref_id: acct }).chat.completions.create(ask);
    const tiny = meterFor(s.billing, 'debit', { price: () => 1e-12 });
    await tiny.openai(openai(), { account_ref_id: acct }).chat.completions.create(ask);
    expect(charged(s.mock, acct)).toMatchObject({ total: 2 });
    expect(charged(s.mock, acct).keys).toHaveLength(2);
  });

  it("a price function answering NaN for a call's bound: an InvalidRequestError, nothing sent", async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'hold', { maxQuantity: undefined, price: () => Number.NaN });
    const client = meter.openai(openai(), { account_ref_id: acct });
    const error = await client.chat.completions
      .create({ ...ask, max_completion_tokens: 10 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues[0]?.field).toBe('price');
    expect(s.provider.count()).toBe(0);
  });

  it('publishes each charge on billing-sdk:ai: model, tokens, cost, mode, never the account or a key', async () => {
    const acct = await account(s.mock);
    const events: AIEvent[] = [];
    const listener = (m: unknown) => events.push(m as AIEvent);
    subscribe('billing-sdk:ai', listener);
    try {
      const meter = meterFor(s.billing, 'debit');
      await meter.openai(openai(), { account_ref_id: acct, event_key: 'key-1' }).chat.completions.create(ask);
    } finally {
      unsubscribe('billing-sdk:ai', listener);
    }
    expect(events).toEqual([
      {
        event: 'charge',
        provider: 'openai',
        model: 'gpt-fake',
        usage: { input: 12, output: 6, cachedInput: 0, cacheWrite: 0, reasoning: 0 },
        cost: 18,
        mode: 'debit',
        estimated: false,
        ended: 'completed',
      },
    ]);
    expect(JSON.stringify(events)).not.toMatch(new RegExp(`${acct}|key-1|Hello`));
  });

  it("a refused debit is told to onError; the caller's answer stands", async () => {
    const acct = await account(s.mock, 5);
    const errors: unknown[] = [];
    const meter = meterFor(s.billing, 'debit', {
      onError: (error, context) => errors.push([error.name, context]),
    });
    const answer = await meter.openai(openai(), { account_ref_id: acct }).chat.completions.create(ask);
    expect(answer.choices).toHaveLength(1);
    expect(errors).toEqual([
      ['SettleRefusedError', expect.objectContaining({ kind: 'charge', quantity: 18 })],
    ]);
    expect(meter.stats().errors).toBe(1);
  });

  it('concurrent calls on one wrap: each charged once, under a key of its own', async () => {
    const acct = await account(s.mock, 10_000);
    const meter = meterFor(s.billing, 'hold');
    const client = meter.openai(openai(), { account_ref_id: acct, event_key: 'req-c' });
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        if (i % 2) return client.chat.completions.create(ask);
        for await (const _chunk of await client.chat.completions.create({ ...ask, stream: true }));
      }),
    );
    const c = charged(s.mock, acct);
    expect(c.total).toBe(12 * 18);
    expect(new Set(c.keys)).toEqual(
      new Set(['req-c', ...Array.from({ length: 11 }, (_, i) => `req-c_${i + 2}`)]),
    );
  });

  it('an onError that throws or rejects changes nothing for the caller', async () => {
    const acct = await account(s.mock, 5);
    let told = 0;
    for (const onError of [
      () => {
        told++;
        throw new Error('reporter down');
      },
      async () => {
        told++;
        throw new Error('reporter down');
      },
    ]) {
      const meter = meterFor(s.billing, 'debit', { onError });
      const answer = await meter.openai(openai(), { account_ref_id: acct }).chat.completions.create(ask);
      expect(answer.choices).toHaveLength(1);
    }
    expect(told).toBe(2);
  });

  it("'track' on a prepaid-credits meter: the service's refusal is told to onError", async () => {
    const acct = await account(s.mock);
    const errors: string[] = [];
    const meter = createAIMeter({
      billing: s.billing,
      ...CREDITS,
      price: PRICE,
      onError: (_, context) => errors.push(context.kind),
    });
    await meter.openai(openai(), { account_ref_id: acct }).chat.completions.create(ask);
    await meter.close();
    expect(errors).toEqual(['dead-letter']);
    void CALLS;
  });

  it("'hold': a cost above the hold settles it and charges the rest under a derived key, told to onError", async () => {
    const acct = await account(s.mock);
    const errors: unknown[] = [];
    const meter = meterFor(s.billing, 'hold', {
      maxQuantity: 10,
      onError: (_, context) => errors.push(context),
    });
    await meter.openai(openai(), { account_ref_id: acct, event_key: 'k' }).chat.completions.create(ask);
    const c = charged(s.mock, acct);
    expect(c.total).toBe(18);
    expect(c.keys.sort()).toEqual(['k', 'k_over']);
    expect(errors).toEqual([expect.objectContaining({ kind: 'overrun', quantity: 18, event_key: 'k' })]);
  });

  it('imports no provider library: openai, @anthropic-ai/sdk and ai are read by their shapes', () => {
    const dir = new URL('../../src/ai/', import.meta.url);
    for (const file of readdirSync(dir)) {
      const text = readFileSync(new URL(file, dir), 'utf8');
      expect(text, file).not.toMatch(
        /^import(?! type)[^;]*from '(openai|@anthropic-ai\/sdk|ai|@ai-sdk\/[\w-]+)'/m,
      );
      expect(text, file).not.toMatch(/import\(['"](openai|@anthropic-ai|ai['"]|@ai-sdk)/);
    }
  });
});
