import { request } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type AIMeterOptions, createAIMeter } from '../../src/ai/index.js';
import type { BillingClient } from '../../src/index.js';
import { DEMO, type MockServer } from '../../src/testing/index.js';
import { clientFor, useMockServer } from '../helpers.js';
import { type FakeProvider, startFakeProvider } from './fake-provider.js';

export const CREDITS = {
  product_code: DEMO.products.aiAssistant.product_code,
  meter_code: DEMO.meters.credits,
};
export const CALLS = {
  product_code: DEMO.products.apiGateway.product_code,
  meter_code: DEMO.meters.apiCalls,
};
/** 12 input tokens at 0.5 and 6 output tokens at 2: the fake's default answer costs 18. */
export const PRICE = { input: 0.5, output: 2 };
export const DEFAULT_COST = 18;

/** The billing mock and the fake provider, one each for the file, reset before each test. */
export function useServices(): {
  readonly mock: MockServer;
  readonly provider: FakeProvider;
  readonly billing: BillingClient;
} {
  const mockRef = useMockServer();
  const state = {} as { provider: FakeProvider; billing: BillingClient };
  beforeAll(async () => {
    state.provider = await startFakeProvider();
    state.billing = clientFor(mockRef.server);
  });
  afterAll(() => state.provider.close());
  beforeEach(() => state.provider.reset());
  return {
    get mock() {
      return mockRef.server;
    },
    get provider() {
      return state.provider;
    },
    get billing() {
      return state.billing;
    },
  };
}

let n = 0;
/** A fresh account with `balance` credits on ai-assistant. */
export async function account(mock: MockServer, balance = 1000): Promise<string> {
  const id = `acct_ai_${process.pid}_${n++}`;
  await mock.lifecycle.subscribe({ account_ref_id: id });
  mock.store.setBalance(id, CREDITS.product_code, CREDITS.meter_code, balance);
  return id;
}

/** Every item of an async iterable (Node 20 has no `Array.fromAsync`). */
export async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** What the mock recorded for an account: approved debits and usage events, as [event_key, quantity]. */
export function charged(
  mock: MockServer,
  account_ref_id: string,
): { total: number; keys: string[]; metadata: unknown[] } {
  const debits = [...mock.store.ledger.values()].filter((d) => d.account_ref_id === account_ref_id);
  const events = mock.store.usageEvents.filter((e) => e.account_ref_id === account_ref_id);
  const all = [...debits, ...events] as { quantity: number; event_key: string; metadata?: unknown }[];
  return {
    total: all.reduce((s, e) => s + e.quantity, 0),
    keys: all.map((e) => e.event_key),
    metadata: all.map((e) => e.metadata),
  };
}

export type Mode = 'track' | 'debit' | 'hold';
export const MODES: Mode[] = ['track', 'debit', 'hold'];

/** A meter of `mode` on the right product (usage events on api-gateway, credits on ai-assistant). */
export function meterFor(billing: BillingClient, mode: Mode, extra: Partial<AIMeterOptions> = {}) {
  return createAIMeter({
    billing,
    ...(mode === 'track' ? CALLS : CREDITS),
    price: PRICE,
    charge: mode,
    maxQuantity: mode === 'hold' ? 200 : undefined,
    ...extra,
  });
}

/** POSTs to `url` as `acct` (its `x-account`), reads until `bytes` arrived, then destroys the connection. */
export function leaveAfter(url: string, acct: string, bytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'x-account': acct } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.length >= bytes) {
          req.destroy();
          resolve(text);
        }
      });
      res.on('error', () => {});
    });
    req.on('error', (error) => (error.message.includes('aborted') ? undefined : reject(error)));
    req.end();
  });
}

/** The real `openai` client on the fake provider, without retries (a retry is a test's own step). */
export const openaiOn = (s: { provider: FakeProvider }): OpenAI =>
  new OpenAI({ apiKey: 'sk-fake', baseURL: `${s.provider.origin}/v1`, maxRetries: 0 });
