import { createOpenAI } from '@ai-sdk/openai';
import { streamText } from 'ai';
import express from 'express';
import { type Context, Hono } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';
import { createAccessCache, createCreditHolds, createGate, type GateAllowed } from '../../src/index.js';
import { serveHono } from '../gate/helpers.js';
import { type LoopbackServer, serveNode, until } from '../helpers.js';
import { account, CREDITS, charged, DEFAULT_COST, leaveAfter, meterFor, useServices } from './support.js';

// A gated route streaming streamText to a real HTTP client that goes away after the first bytes,
// under Hono (@hono/node-server) and Express: charged what it was sent, neither nothing nor all.
const s = useServices();
const open: LoopbackServer[] = [];
afterAll(() => Promise.all(open.map((o) => o.close())));

function parts() {
  const holds = createCreditHolds(s.billing);
  const options = {
    billing: s.billing,
    access: createAccessCache(s.billing),
    holds,
  };
  const meter = meterFor(s.billing, 'hold', { maxQuantity: 50 });
  const model = createOpenAI({ apiKey: 'sk-fake', baseURL: `${s.provider.origin}/v1` }).chat('gpt-fake');
  const need = { credits: { ...CREDITS, quantity: 100, hold: true } };
  return { holds, options, meter, model, need };
}

describe('the route’s client disconnecting mid-stream', () => {
  it('under Hono', async () => {
    const { holds, options, meter, model, need } = parts();
    const gate = createGate<Request>({ ...options, account: (r) => r.headers.get('x-account') ?? undefined });
    const app = new Hono<{ Variables: { billing: GateAllowed } }>();
    app.post('/chat', gate.hono(need), (c: Context<{ Variables: { billing: GateAllowed } }>) => {
      const d = c.get('billing');
      const m = meter.model(model, { account_ref_id: d.account_ref_id, hold: d.hold });
      return streamText({
        model: m,
        prompt: 'Hi',
        abortSignal: c.req.raw.signal,
        onError: () => {},
      }).toTextStreamResponse();
    });
    const served = await serveHono(app.fetch);
    open.push(served);
    const acct = await account(s.mock);
    s.provider.slow(20);
    expect((await leaveAfter(`${served.url}/chat`, acct, 6)).length).toBeGreaterThanOrEqual(6);
    await until(() => holds.stats().open === 0 && holds.stats().reserved === 1);
    const total = charged(s.mock, acct).total;
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThan(DEFAULT_COST);
  });

  it('under Express', async () => {
    const { holds, options, meter, model, need } = parts();
    const gate = createGate<express.Request>({ ...options, account: (r) => r.get('x-account') ?? undefined });
    const app = express();
    app.post('/chat', gate.express(need), (_req, res) => {
      const d = res.locals.billing as GateAllowed;
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const m = meter.model(model, { account_ref_id: d.account_ref_id, hold: d.hold });
      streamText({
        model: m,
        prompt: 'Hi',
        abortSignal: abort.signal,
        onError: () => {},
      }).pipeTextStreamToResponse(res);
    });
    const served = await serveNode(app);
    open.push(served);
    const acct = await account(s.mock);
    s.provider.slow(20);
    expect((await leaveAfter(`${served.url}/chat`, acct, 6)).length).toBeGreaterThanOrEqual(6);
    await until(() => holds.stats().open === 0 && holds.stats().reserved === 1);
    const total = charged(s.mock, acct).total;
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThan(DEFAULT_COST);
  });
});
