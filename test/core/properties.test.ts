import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BillingClient, BillingError, InvalidRequestError } from '../../src/index.js';
import { anything, binaryString } from '../arbitraries.js';
import { clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();

// Unhandled rejections anywhere in this file fail it: a bad input must reject the call's own promise.
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

/** Valid parameters of every public method, against the demo seed. */
const valid = {
  'transactions.list': { account_ref_id: 'acct_active', status: 'completed', page: 1, page_size: 5 },
  'accounts.status': { account_ref_id: 'acct_multi', subscription: 'pro-plan', tier: 'starter' },
  'accounts.isActive': { account_ref_id: 'acct_active' },
  'accounts.fixSubscription': {
    account_ref_id: 'acct_past_due',
    subscription_name: 'pro-plan',
    tier_name: 'pro',
  },
  'tiers.list': { subscription_name: 'pro-plan', page: 1, page_size: 10 },
  'products.list': {},
  'invoices.create': {
    product_manage_id: 'prod_consulting',
    amount: 10,
    customer_email: 'a@example.com',
    currency: 'usd',
    description: 'd',
    account_ref_id: 'acct_active',
    send_to_customer: false,
    return_url: 'https://example.com/back',
  },
  'invoices.list': {
    account_ref_id: 'acct_active',
    email: 'a@example.com',
    status: 'paid',
    page: 1,
    page_size: 5,
  },
  'resolve.publicUrl': {
    account_ref_id: 'acct_active',
    subscription_name: 'pro-plan',
    tier_name: 'pro',
    email: 'a@example.com',
  },
  'entitlements.check': {
    account_ref_id: 'acct_active',
    product_code: 'ai-assistant',
    entitlement_code: 'export',
  },
  'usage.balance': { account_ref_id: 'acct_active', product_code: 'ai-assistant', meter_code: 'credits' },
  'usage.debit': {
    account_ref_id: 'acct_active',
    product_code: 'ai-assistant',
    meter_code: 'credits',
    quantity: 1,
    metadata: { a: 1 },
  },
  'usage.record': {
    account_ref_id: 'acct_active',
    product_code: 'api-gateway',
    meter_code: 'api_calls',
    quantity: 1,
  },
  'usage.summary': {
    account_ref_id: 'acct_active',
    product_code: 'api-gateway',
    meter_code: 'api_calls',
    start: '2026-01-01',
  },
} as const;
type Method = keyof typeof valid;

/** Calls a method by name and settles it: a first page is awaited, a list is not walked. */
function invoke(billing: BillingClient, method: Method, params: unknown, options: unknown): Promise<unknown> {
  const [ns, fn] = method.split('.') as [string, string];
  const target = (
    billing as unknown as Record<string, Record<string, (p: unknown, o: unknown) => PromiseLike<unknown>>>
  )[ns];
  if (!target) throw new Error(method);
  return Promise.resolve(target[fn]?.call(target, params, options));
}

/** Values no type allows, and the awkward ones that do: what a JS caller or bad data may pass. */
const hostile = fc.oneof(
  anything,
  binaryString,
  fc.constantFrom(
    null,
    undefined,
    '',
    '.',
    '..',
    '\uD800',
    'a\uDC00b',
    Number.NaN,
    -1,
    0,
    1.5,
    2 ** 53,
    Symbol('s'),
    10n,
    [],
    () => {},
  ),
);

/** Valid params with some fields replaced by hostile values, and sometimes extra keys. */
const params = (method: Method) =>
  fc
    .record({
      replace: fc.subarray(Object.keys(valid[method])),
      values: fc.array(hostile, { minLength: 4, maxLength: 4 }),
      extra: fc.option(fc.dictionary(fc.string(), hostile, { maxKeys: 2 }), { nil: undefined }),
    })
    .map(({ replace, values, extra }) => {
      const out: Record<string, unknown> = { ...valid[method] };
      replace.forEach((key, i) => {
        out[key] = values[i % values.length];
      });
      return extra ? { ...out, ...extra } : out;
    });

const options = fc.oneof(
  fc.constant(undefined),
  hostile,
  fc.record(
    {
      signal: fc.oneof(hostile, fc.constant(AbortSignal.abort()), fc.constant(new AbortController().signal)),
      timeout: fc.oneof(hostile, fc.constantFrom(1, 5_000, Number.POSITIVE_INFINITY, 2 ** 31 + 1)),
      maxRetries: fc.oneof(hostile, fc.constantFrom(0, 1, 3)),
      headers: fc.oneof(
        hostile,
        fc.dictionary(fc.string(), fc.oneof(fc.string({ unit: 'binary' }), hostile), { maxKeys: 2 }),
      ),
    },
    { requiredKeys: [] },
  ),
);

describe('any input to any public method: a typed BillingError or a result, never anything else', () => {
  it.each(Object.keys(valid) as Method[])('%s', async (method) => {
    const billing = clientFor(mock.server);
    await fc.assert(
      fc.asyncProperty(params(method), options, async (p, o) => {
        const before = mock.server.requests.count();
        const outcome = await invoke(billing, method, p, o).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
        if ('error' in outcome) {
          const { error } = outcome;
          expect(error, String(error)).toBeInstanceOf(BillingError);
          if (error instanceof InvalidRequestError) expect(mock.server.requests.count()).toBe(before);
        }
      }),
      { numRuns: 60 },
    );
    // The valid call itself still works after all that.
    await expect(invoke(billing, method, valid[method], undefined)).resolves.toBeDefined();
  });

  it('resolve.signedUrl, whose options also carry signingKey and expiresIn', async () => {
    const billing = clientFor(mock.server);
    const signed = fc.record(
      {
        signingKey: fc.oneof(hostile, fc.constant(mock.server.signingKey)),
        expiresIn: fc.oneof(hostile, fc.constantFrom(60, '15m')),
        timeout: fc.oneof(hostile, fc.constant(5_000)),
        headers: hostile,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(params('resolve.publicUrl'), fc.oneof(hostile, signed), async (p, o) => {
        const before = mock.server.requests.count();
        const error = await billing.resolve.signedUrl(p as never, o as never).then(
          () => undefined,
          (e: unknown) => e,
        );
        if (error === undefined) return;
        expect(error, String(error)).toBeInstanceOf(BillingError);
        if (error instanceof InvalidRequestError && error.operation !== 'signHostedLink') {
          expect(mock.server.requests.count()).toBe(before);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('the constructor: any options give a client or a BillingError', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            apiKey: fc.oneof(hostile, fc.constant('k')),
            baseUrl: fc.oneof(hostile, fc.constant(mock.server.baseUrl)),
            authHeader: hostile,
            timeout: hostile,
            maxRetries: hostile,
            maxRetryDelay: hostile,
            maxResponseBytes: hostile,
            fetch: hostile,
            headers: hostile,
            logger: hostile,
            logLevel: hostile,
            validation: hostile,
          },
          { requiredKeys: [] },
        ),
        (o) => {
          try {
            expect(new BillingClient(o as never)).toBeInstanceOf(BillingClient);
          } catch (error) {
            expect(error, String(error)).toBeInstanceOf(BillingError);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
