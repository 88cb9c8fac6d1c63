import { describe, expect, it } from 'vitest';
import { type BillingClient, InvalidRequestError } from '../../src/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();
const billing = () => clientFor(mock.server);

/** Calls `fn`, which must reject with InvalidRequestError naming `field`, and checks nothing reached the mock. */
async function refused(
  fn: (b: BillingClient) => unknown,
  field: string | RegExp,
): Promise<InvalidRequestError> {
  const err = (await caught(() => fn(billing()))) as InvalidRequestError;
  expect(err).toBeInstanceOf(InvalidRequestError);
  const fields = err.issues.map((i) => i.field);
  expect(
    fields.some((f) => (typeof field === 'string' ? f === field : field.test(f))),
    fields.join(','),
  ).toBe(true);
  expect(mock.server.requests.count()).toBe(0);
  return err;
}

const meter = { account_ref_id: 'acct_active', product_code: 'ai-assistant', meter_code: 'credits' };
const lone = 'abc\uD800def';
const circular: Record<string, unknown> = {};
circular.self = circular;
const any = (v: unknown) => v as never;

describe('a rejected promise, never a synchronous throw', () => {
  it('invoices.list({}).catch(handler) runs the handler', async () => {
    let handled: unknown;
    await billing()
      .invoices.list({})
      .catch((err) => {
        handled = err;
      });
    expect(handled).toBeInstanceOf(InvalidRequestError);
  });

  it('then(_, onRejected) and finally run too, on lists and on single calls', async () => {
    const seen: string[] = [];
    await billing()
      .invoices.list({})
      .then(undefined, () => seen.push('list then'));
    await billing()
      .invoices.list({})
      .finally(() => seen.push('list finally'))
      .catch(() => seen.push('list catch'));
    await billing()
      .usage.debit(any({}))
      .catch(() => seen.push('call catch'));
    expect(seen).toEqual(['list then', 'list finally', 'list catch', 'call catch']);
  });

  it('no method throws where it is called, whatever it is given', () => {
    const b = billing();
    for (const params of [undefined, null, 5, 'x', [], { nope: 1 }]) {
      for (const call of [
        () => b.invoices.list(any(params)),
        () => b.transactions.list(any(params)),
        () => b.tiers.list(any(params)),
        () => b.products.list(any(params)),
        () => b.accounts.status(any(params)),
        () => b.accounts.isActive(any(params)),
        () => b.accounts.fixSubscription(any(params)),
        () => b.invoices.create(any(params)),
        () => b.resolve.publicUrl(any(params)),
        () => b.resolve.signedUrl(any(params), any(params)),
        () => b.entitlements.check(any(params)),
        () => b.usage.balance(any(params)),
        () => b.usage.debit(any(params)),
        () => b.usage.record(any(params)),
        () => b.usage.summary(any(params)),
      ]) {
        const result = call();
        // Swallow: this test is about the synchronous part only.
        Promise.resolve(result).catch(() => {});
      }
    }
  });
});

describe('per-call options are checked like client options', () => {
  it('a signal that is not an AbortSignal', async () => {
    await refused(
      (b) => b.invoices.list({ account_ref_id: 'acct_active' }, any({ signal: {} })),
      'options.signal',
    );
    await refused((b) => b.usage.balance(meter, any({ signal: 'stop' })), 'options.signal');
  });

  it.each([
    [{ maxRetries: Number.NaN }, 'options.maxRetries'],
    [{ maxRetries: -1 }, 'options.maxRetries'],
    [{ maxRetries: 1.5 }, 'options.maxRetries'],
    [{ maxRetries: Number.POSITIVE_INFINITY }, 'options.maxRetries'],
    [{ timeout: 0 }, 'options.timeout'],
    [{ timeout: '5' }, 'options.timeout'],
    [{ timout: 5 }, 'options.timout'],
    [{ headers: { 'x-a': 'a\r\nx-injected: 1' } }, 'options.headers.x-a'],
    [{ headers: { 'x-a': 'nul\u0000' } }, 'options.headers.x-a'],
    [{ headers: { 'bad name': 'v' } }, /^options\.headers\[/],
    [{ headers: { 'x-a': 5 } }, 'options.headers.x-a'],
    [{ headers: 'x-a: 1' }, 'options.headers'],
  ])('%o', async (options, field) => {
    await refused((b) => b.usage.balance(meter, any(options)), field);
  });

  it('an invalid header is a caller error, not a retried connection error', async () => {
    const err = await refused(
      (b) => b.usage.debit({ ...meter, quantity: 1 }, { headers: { 'x-trace': 'line\nbreak' } }),
      'options.headers.x-trace',
    );
    expect(err.message).toMatch(/^usage\.debit: /);
  });
});

describe('untyped errors of bad values are now InvalidRequestError', () => {
  it('a lone surrogate in a path segment', async () => {
    await refused((b) => b.transactions.list({ account_ref_id: lone }), 'account_ref_id');
    await refused((b) => b.accounts.status({ account_ref_id: lone }), 'account_ref_id');
    await refused((b) => b.tiers.list({ subscription_name: lone }), 'subscription_name');
  });

  it('BigInt or circular metadata', async () => {
    await refused((b) => b.usage.debit({ ...meter, quantity: 1, metadata: { n: 10n } }), 'metadata');
    await refused((b) => b.usage.record({ ...meter, quantity: 1, metadata: circular }), 'metadata');
    await refused((b) => b.usage.record({ ...meter, quantity: 1, metadata: any([1]) }), 'metadata');
  });

  it('an extra key, even one holding a null-prototype object, is refused by name', async () => {
    await refused(
      (b) => b.invoices.list(any({ account_ref_id: 'acct_active', extra: Object.create(null) })),
      'extra',
    );
    await refused((b) => b.usage.balance(any({ ...meter, acount_ref_id: 'typo' })), 'acount_ref_id');
  });

  it('a Symbol or BigInt page_size on products.list', async () => {
    await refused((b) => b.products.list(any({ page_size: Symbol('x') })), 'page_size');
    await refused((b) => b.products.list(any({ page_size: 10n })), 'page_size');
    await refused((b) => b.invoices.list(any({ account_ref_id: 'a', page_size: 10n })), 'page_size');
  });

  it('params that are not a plain object', async () => {
    for (const params of [5, 'acct', [], new Date()]) {
      await refused((b) => b.usage.balance(any(params)), 'params');
    }
  });
});

describe('null is absent everywhere, so cross-field rules see it too', () => {
  it('{ subscription: null, tier } is refused (tier needs subscription), not sent as ?tier=', async () => {
    await refused(
      (b) => b.accounts.status(any({ account_ref_id: 'acct_active', subscription: null, tier: 'pro' })),
      'tier',
    );
  });

  it('tiers.list({ subscription_name: null }) lists every tier at tiers/', async () => {
    const page = await billing().tiers.list(any({ subscription_name: null }));
    expect(page.count).toBeGreaterThan(0);
    expect(mock.server.requests.last()?.path).toBe('/api/tiers/');
  });

  it('invoices.list({ account_ref_id: null }) and resolve with email: null are refused', async () => {
    await refused((b) => b.invoices.list(any({ account_ref_id: null })), 'account_ref_id');
    await refused(
      (b) =>
        b.resolve.publicUrl(
          any({
            account_ref_id: 'acct_active',
            subscription_name: 'pro-plan',
            tier_name: 'pro',
            email: null,
          }),
        ),
      'email',
    );
  });

  it('a required null is "is required"', async () => {
    const err = await refused((b) => b.usage.balance(any({ ...meter, meter_code: null })), 'meter_code');
    expect(err.issues).toEqual([{ field: 'meter_code', message: 'is required' }]);
  });
});

describe('usage.summary start and end are ISO 8601 (or a Date)', () => {
  it.each(['1', 'yesterday', '2026-13-01', 'Jan 1 2026', '2026-01-01T25:00:00Z'])(
    'refuses %s',
    async (start) => {
      await refused((b) => b.usage.summary({ ...meter, start }), 'start');
    },
  );

  it.each(['2026-01-01', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00.123+02:00'])(
    'sends %s as given',
    async (start) => {
      await billing().usage.summary({ ...meter, start });
      expect(mock.server.requests.last()?.query.start).toBe(start);
    },
  );

  it('sends a Date as ISO 8601, and refuses an invalid one', async () => {
    await billing().usage.summary({ ...meter, end: new Date('2026-02-01T00:00:00Z') });
    expect(mock.server.requests.last()?.query.end).toBe('2026-02-01T00:00:00.000Z');
    mock.server.requests.clear();
    await refused((b) => b.usage.summary({ ...meter, end: new Date('nope') }), 'end');
  });
});

describe('lone surrogates in query values are refused, not replaced by U+FFFD', () => {
  it.each([
    ['invoices.list email', (b: BillingClient) => b.invoices.list({ email: lone }), 'email'],
    [
      'entitlements.check code',
      (b: BillingClient) =>
        b.entitlements.check({ ...meter, entitlement_code: lone, meter_code: undefined } as never),
      /.+/,
    ],
    [
      'usage.balance meter',
      (b: BillingClient) => b.usage.balance({ ...meter, meter_code: lone }),
      'meter_code',
    ],
    [
      'invoices.create description',
      (b: BillingClient) =>
        b.invoices.create({ product_manage_id: 'p', amount: 1, customer_email: 'a@x.io', description: lone }),
      'description',
    ],
  ])('%s', async (_, fn, field) => {
    await refused(fn, field);
  });

  it('well-formed astral characters are sent intact', async () => {
    const page = await billing().invoices.list({ email: 'emoji\u{1F600}@example.com' });
    expect(page.count).toBe(0);
    expect(mock.server.requests.last()?.query.email).toBe('emoji\u{1F600}@example.com');
  });
});
