import { Hono } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';
import { serveHono } from '../gate/helpers.js';
import { type LoopbackServer, until } from '../helpers.js';
import {
  account,
  CALLS,
  CREDITS,
  charged,
  DEFAULT_COST,
  leaveAfter,
  openaiOn,
  PRICE,
  useServices,
} from './support.js';

// The built package, as an application loads it (npm test builds it first): billing-sdk/ai is a
// bundle of its own, with its own copy of the client class, and the application's BillingClient
// comes from billing-sdk. The meter must make its holds and tracker from that client all the same.
// Through a computed URL, so the type-check (which runs beside the build, before dist exists) does
// not need the built declarations: the types are the sources' own.
const built = (file: string) => new URL(`../../dist/${file}`, import.meta.url).href;
const sdk: typeof import('../../src/index.js') = await import(built('index.js'));
const ai: typeof import('../../src/ai/index.js') = await import(built('ai/index.js'));

const s = useServices();
const client = () => openaiOn(s);
const ask = { model: 'gpt-fake', messages: [{ role: 'user' as const, content: 'Hello there' }] };

describe('billing-sdk/ai with a BillingClient of billing-sdk (the built package)', () => {
  const billing = () =>
    new sdk.BillingClient({ apiKey: s.mock.apiKey, baseUrl: s.mock.baseUrl, logLevel: 'off' });

  it("'hold' with the meter's own holds: a streamed call is charged, one over the balance refused before the provider", async () => {
    const acct = await account(s.mock, 100);
    const meter = ai.createAIMeter({
      billing: billing(),
      ...CREDITS,
      price: PRICE,
      charge: 'hold',
      maxQuantity: 50,
    });
    const openai = meter.openai(client(), { account_ref_id: acct });
    let text = '';
    for await (const chunk of await openai.chat.completions.create({ ...ask, stream: true }))
      text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('w0 w1 w2 w3 w4 w5 ');
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);

    const poor = await account(s.mock, 10);
    const refused = meter.openai(client(), { account_ref_id: poor }).chat.completions.create(ask);
    await expect(refused).rejects.toBeInstanceOf(sdk.InsufficientCreditsError);
    expect(s.provider.count()).toBe(1);
    await meter.close();
  });

  it("'track' with the meter's own tracker: the call's usage event is sent", async () => {
    const acct = await account(s.mock);
    const meter = ai.createAIMeter({ billing: billing(), ...CALLS, price: PRICE });
    await meter.openai(client(), { account_ref_id: acct }).chat.completions.create(ask);
    await meter.close();
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
  });

  // A gated route's hold comes from billing-sdk's gate, the meter from billing-sdk/ai: two copies of
  // the hold's class. What the calls spent must still be settled when the client leaves mid-stream.
  const open: LoopbackServer[] = [];
  afterAll(() => Promise.all(open.map((o) => o.close())));

  it("a gated route's hold: a client that leaves mid-stream is charged what it was sent", async () => {
    const client = billing();
    const holds = sdk.createCreditHolds(client);
    const gate = sdk.createGate({
      billing: client,
      access: sdk.createAccessCache(client),
      holds,
      account: (r: Request) => r.headers.get('x-account') ?? undefined,
    });
    const meter = ai.createAIMeter({
      billing: client,
      ...CREDITS,
      price: PRICE,
      charge: 'hold',
      maxQuantity: 50,
    });
    const need = { credits: { ...CREDITS, quantity: 100, hold: true as const } };
    const app = new Hono<{ Variables: { billing: import('../../src/index.js').GateAllowed } }>();
    app.post('/chat', gate.hono(need), async (c) => {
      const d = c.get('billing');
      const openai = meter.openai(clientOf(), { account_ref_id: d.account_ref_id, hold: d.hold });
      const stream = await openai.chat.completions.create(
        { ...ask, stream: true },
        { signal: c.req.raw.signal },
      );
      const encoder = new TextEncoder();
      const it = stream[Symbol.asyncIterator]();
      return new Response(
        new ReadableStream({
          async pull(controller) {
            const r = await it.next();
            if (r.done) controller.close();
            else controller.enqueue(encoder.encode(r.value.choices[0]?.delta.content ?? ''));
          },
          async cancel() {
            await it.return?.();
          },
        }),
      );
    });
    const served = await serveHono(app.fetch);
    open.push(served);
    const acct = await account(s.mock);
    s.provider.slow(20);
    await leaveAfter(`${served.url}/chat`, acct, 6);
    await until(() => holds.stats().open === 0);
    const total = charged(s.mock, acct).total;
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThan(DEFAULT_COST);
  });
});

const clientOf = client;
