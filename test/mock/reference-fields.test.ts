import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO, LIFECYCLE_EVENTS, type MockServer } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { describeKeys, keyProblems, parseReference, type Shape } from '../reference/fields.js';
import { type Answer, client } from './helpers.js';
import { useReceiver } from './receiver.js';

// The mock must serve what the reference documents and nothing more: a user testing against it
// would otherwise come to rely on fields the service does not return.

const COPY = new URL('../reference/api-reference.md', import.meta.url);
/** `../shared/api-reference.md` relative to the repository root; absent in a clean clone (CI). */
const SHARED = new URL('../../../shared/api-reference.md', import.meta.url);

const ref = parseReference(readFileSync(COPY, 'utf8'));

const T = 'GET /transactions/<account_ref_id>/';
const S = 'GET /account/<account_ref_id>/status/';
const TIERS = 'GET /tiers/';
const TIERS_OF = 'GET /tiers/<subscription_name>/';
const P = 'GET /products/';
const IC = 'POST /invoices/create/';
const IL = 'GET /invoices/';
const R = 'GET /resolve/public-url/';
const F = 'GET /fix-subscription/';
const E = 'GET /entitlements/check/';
const B = 'GET /usage/credits/balance/';
const D = 'POST /usage/credits/debit/';
const UE = 'POST /usage/events/';
const US = 'GET /usage/summary/';
const ENDPOINTS = [T, S, TIERS, TIERS_OF, P, IC, IL, R, F, E, B, D, UE, US];

/**
 * Variants the parser does not derive from the reference's wording, written out by hand.
 */
const HAND_WRITTEN: Record<string, Record<string, Shape>> = {
  // Line 155: "Response: Account status, single form or multiple form." — the two forms are the
  // section 2 objects of those names (lines 44 and 55).
  [S]: {
    'single form': { kind: 'ref', name: 'Account status (single form)' },
    'multiple form': { kind: 'ref', name: 'Account status (multiple form)' },
  },
  // Line 245: "Repeating a call with the same key returns the same effective result": the replay
  // of an approved debit is the success body again.
  [D]: { 'retry with same event_key': ref.endpoints[D]?.variants.success ?? { kind: 'empty' } },
};

function documented(endpoint: string): Record<string, Shape> {
  return { ...ref.endpoints[endpoint]?.variants, ...HAND_WRITTEN[endpoint] };
}

/** A variant of an endpoint, or `status 400` / `status 401` / `status 404` for section 7's error bodies. */
function expected(endpoint: string, variant: string): Shape {
  const status = /^status (\d+)$/.exec(variant)?.[1];
  const shape = status !== undefined ? ref.errors[Number(status)] : documented(endpoint)[variant];
  if (!shape) throw new Error(`the reference documents no variant "${variant}" of ${endpoint}`);
  return shape;
}

type Api = ReturnType<typeof client>;

interface Case {
  name: string;
  endpoint: string;
  variant: string;
  call(api: Api, server: MockServer): Promise<Answer>;
}

const A = DEMO.accounts.active;
const credits = {
  account_ref_id: A,
  product_code: DEMO.products.aiAssistant.product_code,
  meter_code: 'credits',
};
const calls = {
  account_ref_id: A,
  product_code: DEMO.products.apiGateway.product_code,
  meter_code: 'api_calls',
};
const creditsQuery = new URLSearchParams(credits).toString();
const callsQuery = new URLSearchParams(calls).toString();
const invoice = {
  product_manage_id: DEMO.products.ebook.manage_id,
  amount: 19,
  customer_email: 'buyer@example.com',
};
const pro = 'subscription_name=pro-plan&tier_name=pro';

const get =
  (path: string) =>
  (api: Api): Promise<Answer> =>
    api.get(path);
const post =
  (path: string, body: unknown) =>
  (api: Api): Promise<Answer> =>
    api.post(path, body);

/** One valid request per endpoint, sent with a wrong key for the 401 body. */
const VALID: Record<string, (api: Api, headers: Record<string, string>) => Promise<Answer>> = {
  [T]: (api, h) => api.get(`transactions/${A}/`, h),
  [S]: (api, h) => api.get(`account/${A}/status/`, h),
  [TIERS]: (api, h) => api.get('tiers/', h),
  [TIERS_OF]: (api, h) => api.get('tiers/pro-plan/', h),
  [P]: (api, h) => api.get('products/', h),
  [IC]: (api, h) => api.post('invoices/create/', invoice, h),
  [IL]: (api, h) => api.get(`invoices/?account_ref_id=${A}`, h),
  [R]: (api, h) =>
    api.get(`resolve/public-url/?account_ref_id=${A}&product_name=ebook&email=a@example.com`, h),
  [F]: (api, h) => api.get(`fix-subscription/?account_ref_id=${DEMO.accounts.pastDue}&${pro}`, h),
  [E]: (api, h) =>
    api.get(`entitlements/check/?account_ref_id=${A}&product_code=ai-assistant&entitlement_code=export`, h),
  [B]: (api, h) => api.get(`usage/credits/balance/?${creditsQuery}`, h),
  [D]: (api, h) => api.post('usage/credits/debit/', { ...credits, quantity: 1, event_key: 'k401' }, h),
  [UE]: (api, h) => api.post('usage/events/', { ...calls, quantity: 1, event_key: 'k401' }, h),
  [US]: (api, h) => api.get(`usage/summary/?${callsQuery}`, h),
};

const CASES: Case[] = [
  // Transactions: full, first, middle/last and empty pages, so next and previous are each seen set and null.
  {
    name: 'every transaction',
    endpoint: T,
    variant: 'default',
    call: get(`transactions/${A}/?page_size=100`),
  },
  { name: 'first page', endpoint: T, variant: 'default', call: get(`transactions/${A}/?page_size=10`) },
  {
    name: 'middle page',
    endpoint: T,
    variant: 'default',
    call: get(`transactions/${A}/?page=2&page_size=10`),
  },
  { name: 'status filter', endpoint: T, variant: 'default', call: get(`transactions/${A}/?status=failed`) },
  {
    name: 'empty account',
    endpoint: T,
    variant: 'default',
    call: get(`transactions/${DEMO.accounts.empty}/`),
  },
  { name: 'bad page', endpoint: T, variant: 'status 400', call: get(`transactions/${A}/?page=0&status=x`) },
  { name: 'unknown account', endpoint: T, variant: 'status 404', call: get('transactions/nobody/') },

  { name: 'one subscription', endpoint: S, variant: 'single form', call: get(`account/${A}/status/`) },
  {
    name: 'filtered to one of several',
    endpoint: S,
    variant: 'single form',
    call: get(`account/${DEMO.accounts.multi}/status/?subscription=pro-plan&tier=enterprise`),
  },
  {
    name: 'inactive',
    endpoint: S,
    variant: 'single form',
    call: get(`account/${DEMO.accounts.pastDue}/status/`),
  },
  {
    name: 'cancellation scheduled',
    endpoint: S,
    variant: 'single form',
    async call(api, server) {
      await server.lifecycle.cancelAtPeriodEnd({ account_ref_id: A });
      return api.get(`account/${A}/status/`);
    },
  },
  {
    name: 'several subscriptions',
    endpoint: S,
    variant: 'multiple form',
    call: get(`account/${DEMO.accounts.multi}/status/`),
  },
  {
    name: 'several, one with a cancellation scheduled',
    endpoint: S,
    variant: 'multiple form',
    async call(api, server) {
      await server.lifecycle.cancelAtPeriodEnd({
        account_ref_id: DEMO.accounts.multi,
        subscription: 'pro-plan',
      });
      return api.get(`account/${DEMO.accounts.multi}/status/`);
    },
  },
  { name: 'unknown account', endpoint: S, variant: 'status 404', call: get('account/nobody/status/') },
  {
    name: 'no such subscription',
    endpoint: S,
    variant: 'status 404',
    call: get(`account/${A}/status/?subscription=nope`),
  },

  { name: 'every tier', endpoint: TIERS, variant: 'default', call: get('tiers/') },
  { name: 'a page', endpoint: TIERS, variant: 'default', call: get('tiers/?page=2&page_size=2') },
  { name: 'page_size above 100', endpoint: TIERS, variant: 'status 400', call: get('tiers/?page_size=101') },
  { name: 'pro-plan', endpoint: TIERS_OF, variant: 'default', call: get('tiers/pro-plan/') },
  { name: 'team-plan', endpoint: TIERS_OF, variant: 'default', call: get('tiers/team-plan/') },
  { name: 'unknown subscription', endpoint: TIERS_OF, variant: 'status 404', call: get('tiers/nope/') },

  { name: 'every product', endpoint: P, variant: 'default', call: get('products/') },

  { name: 'required fields only', endpoint: IC, variant: 'default', call: post('invoices/create/', invoice) },
  {
    name: 'every field',
    endpoint: IC,
    variant: 'default',
    call: post('invoices/create/', {
      ...invoice,
      currency: 'eur',
      description: 'ebook',
      account_ref_id: A,
      send_to_customer: true,
      return_url: 'https://app.example.com/thanks',
    }),
  },
  { name: 'missing fields', endpoint: IC, variant: 'status 400', call: post('invoices/create/', {}) },
  { name: 'not JSON', endpoint: IC, variant: 'status 400', call: post('invoices/create/', 'not json') },

  {
    name: 'every invoice',
    endpoint: IL,
    variant: 'default',
    call: get(`invoices/?account_ref_id=${A}&page_size=100`),
  },
  {
    name: 'middle page',
    endpoint: IL,
    variant: 'default',
    call: get(`invoices/?account_ref_id=${A}&page=2`),
  },
  {
    name: 'by e-mail and status',
    endpoint: IL,
    variant: 'default',
    call: get(`invoices/?email=${DEMO.emails.pastDue}&status=open`),
  },
  {
    name: 'empty account',
    endpoint: IL,
    variant: 'default',
    call: get(`invoices/?account_ref_id=${DEMO.accounts.empty}`),
  },
  { name: 'neither account nor e-mail', endpoint: IL, variant: 'status 400', call: get('invoices/') },
  {
    name: 'unknown account',
    endpoint: IL,
    variant: 'status 404',
    call: get('invoices/?account_ref_id=nobody'),
  },

  {
    name: 'saas_only product',
    endpoint: R,
    variant: 'Shape A',
    call: get(`resolve/public-url/?account_ref_id=${A}&product_name=ebook&email=a@example.com`),
  },
  {
    name: 'saas_only tier',
    endpoint: R,
    variant: 'Shape B',
    call: get(`resolve/public-url/?account_ref_id=${A}&${pro}&email=a@example.com`),
  },
  {
    name: 'neither product nor tier',
    endpoint: R,
    variant: 'error',
    call: get(`resolve/public-url/?account_ref_id=${A}`),
  },
  {
    name: 'product not saas_only',
    endpoint: R,
    variant: 'error',
    call: get(`resolve/public-url/?account_ref_id=${A}&product_name=consulting`),
  },
  {
    name: 'tier without e-mail',
    endpoint: R,
    variant: 'error',
    call: get(`resolve/public-url/?account_ref_id=${A}&${pro}`),
  },
  {
    name: 'product without e-mail',
    endpoint: R,
    variant: 'error',
    call: get(`resolve/public-url/?account_ref_id=${A}&product_name=ebook`),
  },
  {
    name: 'subscription not saas_only',
    endpoint: R,
    variant: 'error',
    call: get(
      `resolve/public-url/?account_ref_id=${A}&subscription_name=team-plan&tier_name=basic&email=a@example.com`,
    ),
  },
  {
    name: 'unknown tier',
    endpoint: R,
    variant: 'error',
    call: get(
      `resolve/public-url/?account_ref_id=${A}&subscription_name=pro-plan&tier_name=nope&email=a@example.com`,
    ),
  },
  {
    name: 'no account_ref_id',
    endpoint: R,
    variant: 'status 400',
    call: get('resolve/public-url/?product_name=ebook'),
  },

  {
    name: 'past due',
    endpoint: F,
    variant: 'default',
    call: get(`fix-subscription/?account_ref_id=${DEMO.accounts.pastDue}&${pro}`),
  },
  {
    name: 'already active',
    endpoint: F,
    variant: 'empty',
    call: get(`fix-subscription/?account_ref_id=${A}&${pro}`),
  },
  {
    name: 'missing tier_name',
    endpoint: F,
    variant: 'status 400',
    call: get(`fix-subscription/?account_ref_id=${A}`),
  },
  {
    name: 'unknown account',
    endpoint: F,
    variant: 'status 404',
    call: get(`fix-subscription/?account_ref_id=nobody&${pro}`),
  },

  {
    name: 'granted',
    endpoint: E,
    variant: 'default',
    call: get(`entitlements/check/?account_ref_id=${A}&product_code=ai-assistant&entitlement_code=export`),
  },
  {
    name: 'not granted',
    endpoint: E,
    variant: 'default',
    call: get(`entitlements/check/?account_ref_id=${A}&product_code=ai-assistant&entitlement_code=sso`),
  },
  {
    name: 'missing codes',
    endpoint: E,
    variant: 'status 400',
    call: get(`entitlements/check/?account_ref_id=${A}`),
  },
  {
    name: 'unknown account',
    endpoint: E,
    variant: 'status 404',
    call: get('entitlements/check/?account_ref_id=nobody&product_code=x&entitlement_code=y'),
  },

  {
    name: 'seeded balance',
    endpoint: B,
    variant: 'default',
    call: get(`usage/credits/balance/?${creditsQuery}`),
  },
  {
    name: 'no balance record',
    endpoint: B,
    variant: 'default',
    call: get(
      `usage/credits/balance/?account_ref_id=${DEMO.accounts.empty}&product_code=ai-assistant&meter_code=credits`,
    ),
  },
  {
    name: 'missing codes',
    endpoint: B,
    variant: 'status 400',
    call: get(`usage/credits/balance/?account_ref_id=${A}`),
  },
  {
    name: 'unknown account',
    endpoint: B,
    variant: 'status 404',
    call: get('usage/credits/balance/?account_ref_id=nobody&product_code=x&meter_code=y'),
  },

  {
    name: 'approved',
    endpoint: D,
    variant: 'success',
    call: post('usage/credits/debit/', { ...credits, quantity: 5, event_key: 'd1', metadata: { job: 1 } }),
  },
  {
    name: 'replayed',
    endpoint: D,
    variant: 'retry with same event_key',
    async call(api) {
      await api.post('usage/credits/debit/', { ...credits, quantity: 5, event_key: 'd2' });
      return api.post('usage/credits/debit/', { ...credits, quantity: 5, event_key: 'd2' });
    },
  },
  {
    name: 'too many',
    endpoint: D,
    variant: 'insufficient credits',
    call: post('usage/credits/debit/', { ...credits, quantity: 5000, event_key: 'd3' }),
  },
  {
    name: 'postpaid product',
    endpoint: D,
    variant: 'wrong usage model or configuration',
    call: post('usage/credits/debit/', { ...calls, quantity: 1, event_key: 'd4' }),
  },
  {
    name: 'quantity 0',
    endpoint: D,
    variant: 'status 400',
    call: post('usage/credits/debit/', { ...credits, quantity: 0, event_key: 'd5' }),
  },
  {
    name: 'unknown account',
    endpoint: D,
    variant: 'status 404',
    call: post('usage/credits/debit/', {
      ...credits,
      account_ref_id: 'nobody',
      quantity: 1,
      event_key: 'd6',
    }),
  },

  {
    name: 'recorded',
    endpoint: UE,
    variant: 'first accepted',
    call: post('usage/events/', { ...calls, quantity: 3, event_key: 'e1', metadata: { job: 1 } }),
  },
  {
    name: 'replayed',
    endpoint: UE,
    variant: 'retry with same event_key',
    async call(api) {
      await api.post('usage/events/', { ...calls, quantity: 3, event_key: 'e2' });
      return api.post('usage/events/', { ...calls, quantity: 3, event_key: 'e2' });
    },
  },
  {
    name: 'prepaid product',
    endpoint: UE,
    variant: 'configuration error',
    call: post('usage/events/', { ...credits, quantity: 1, event_key: 'e3' }),
  },
  {
    name: 'no event_key',
    endpoint: UE,
    variant: 'status 400',
    call: post('usage/events/', { ...calls, quantity: 1 }),
  },
  {
    name: 'unknown account',
    endpoint: UE,
    variant: 'status 404',
    call: post('usage/events/', { ...calls, account_ref_id: 'nobody', quantity: 1, event_key: 'e4' }),
  },

  { name: 'all time', endpoint: US, variant: 'default', call: get(`usage/summary/?${callsQuery}`) },
  {
    name: 'a range',
    endpoint: US,
    variant: 'default',
    call: get(`usage/summary/?${callsQuery}&start=2026-01-01T00:00:00Z&end=2026-02-01T00:00:00Z`),
  },
  {
    name: 'no events',
    endpoint: US,
    variant: 'default',
    call: get(
      `usage/summary/?account_ref_id=${DEMO.accounts.empty}&product_code=api-gateway&meter_code=api_calls`,
    ),
  },
  {
    name: 'bad start',
    endpoint: US,
    variant: 'status 400',
    call: get(`usage/summary/?${callsQuery}&start=yesterday`),
  },
  {
    name: 'unknown account',
    endpoint: US,
    variant: 'status 404',
    call: get('usage/summary/?account_ref_id=nobody&product_code=x&meter_code=y'),
  },

  // Section 5: the key goes in either header; a wrong one in each gives the same 401 body.
  ...ENDPOINTS.flatMap((endpoint): Case[] => [
    {
      name: 'wrong Bearer key',
      endpoint,
      variant: 'status 401',
      call: (api) => VALID[endpoint]!(api, { authorization: 'Bearer wrong' }),
    },
    {
      name: 'empty key headers',
      endpoint,
      variant: 'status 401',
      call: (api) => VALID[endpoint]!(api, { authorization: '', 'x-api-key': '' }),
    },
  ]),
];

function bodyProblems(answer: Answer, shape: Shape): string[] {
  if (shape.kind === 'empty') return answer.text === '' ? [] : [`expected an empty body, got ${answer.text}`];
  if (answer.body === undefined) return [`expected a JSON body, got ${JSON.stringify(answer.text)}`];
  return keyProblems(ref, answer.body, shape);
}

describe('the committed copy of the API reference', () => {
  it('is byte-identical to ../shared/api-reference.md when that exists', () => {
    if (!existsSync(SHARED)) {
      console.warn(
        `reference comparison skipped: ${fileURLToPath(SHARED)} does not exist; using test/reference/api-reference.md as is`,
      );
      return;
    }
    const same = readFileSync(COPY).equals(readFileSync(SHARED));
    expect(same, 'the contract changed: copy ../shared/api-reference.md to test/reference/ and review').toBe(
      true,
    );
  });
});

describe('the reference parser', () => {
  it('finds every endpoint, and a documented body for each', () => {
    expect(Object.keys(ref.endpoints).sort()).toEqual([...ENDPOINTS].sort());
    for (const endpoint of ENDPOINTS) {
      // An unparsed Response sentence is fine only where this file writes the variants by hand.
      if (ref.endpoints[endpoint]?.unparsed !== undefined) expect(HAND_WRITTEN[endpoint]).toBeDefined();
      expect(Object.keys(documented(endpoint)).length, endpoint).toBeGreaterThan(0);
    }
  });

  it('reads the tables it relies on', () => {
    // Product.price is optional: line 70 says it is "present only in one documented variant of the
    // list response" (and on single products only), so its absence is no error.
    expect(describeKeys(ref, { kind: 'ref', name: 'Product' })).toEqual([
      'label_name',
      'manage_id',
      'price?',
      'type',
    ]);
    expect(Object.keys(ref.envelope)).toEqual(['count', 'next', 'previous', 'results']);
    expect(describeKeys(ref, expected(P, 'default'))).toEqual(['count', 'results']);
    expect(describeKeys(ref, expected(D, 'insufficient credits'))).toEqual([
      'approved',
      'error_code',
      'remaining_balance',
    ]);
    expect(describeKeys(ref, { kind: 'ref', name: 'Webhook payload' })).toHaveLength(7);
    expect(Object.keys(ref.errors)).toEqual(['400', '401', '404']);
  });

  it('reports undocumented and missing keys, nested ones included', () => {
    const product = { manage_id: 'm', label_name: 'l', type: 'single', product_code: 'p' };
    expect(keyProblems(ref, { count: 1, results: [product] }, expected(P, 'default'))).toEqual([
      '$.results[0]: undocumented key "product_code"',
    ]);
    expect(keyProblems(ref, { count: 1 }, expected(P, 'default'))).toEqual(['$: missing key "results"']);
  });
});

describe('every mock answer has exactly the documented keys', () => {
  const mock = useMockServer({ webhookRetry: { delayMs: 5 } });
  const rx = useReceiver();
  const api = client(mock);
  beforeEach(() => mock.server.webhooks.register(rx.receiver.url));

  it('covers every documented variant of every endpoint and every error body', () => {
    for (const endpoint of ENDPOINTS) {
      const covered = new Set(CASES.filter((c) => c.endpoint === endpoint).map((c) => c.variant));
      expect(
        [...Object.keys(documented(endpoint)), 'status 401'].filter((v) => !covered.has(v)),
        endpoint,
      ).toEqual([]);
    }
    const statuses = new Set(CASES.map((c) => c.variant).filter((v) => v.startsWith('status ')));
    expect(Object.keys(ref.errors).filter((s) => !statuses.has(`status ${s}`))).toEqual([]);
  });

  it.each(CASES.map((c) => [`${c.endpoint} ${c.variant}: ${c.name}`, c] as const))('%s', async (_, c) => {
    const answer = await c.call(api, mock.server);
    const status = /^status (\d+)$/.exec(c.variant)?.[1];
    if (status !== undefined) expect(answer.status).toBe(Number(status));
    else expect(answer.status, answer.text).toBeLessThan(500);
    expect(bodyProblems(answer, expected(c.endpoint, c.variant)), answer.text.slice(0, 500)).toEqual([]);
  });

  const lifecycle: Record<(typeof LIFECYCLE_EVENTS)[number], (server: MockServer) => Promise<unknown>> = {
    'subscription-created': (s) =>
      s.lifecycle.subscribe({ account_ref_id: 'acct_new', subscription: 'pro-plan' }),
    'payment-succeeded': (s) => s.lifecycle.paymentSucceeded({ account_ref_id: DEMO.accounts.pastDue }),
    'payment-failed': (s) => s.lifecycle.paymentFailed({ account_ref_id: A }),
    'subscription-cancelled': (s) => s.lifecycle.cancel({ account_ref_id: A }),
    'subscription-cancel-at-period-end': (s) => s.lifecycle.cancelAtPeriodEnd({ account_ref_id: A }),
    'subscription-incomplete': (s) =>
      s.lifecycle.incomplete({ account_ref_id: DEMO.accounts.multi, subscription: 'team-plan' }),
  };

  it.each(LIFECYCLE_EVENTS.map((e) => [e]))('webhook payload of %s', async (event) => {
    await lifecycle[event](mock.server);
    const received = rx.receiver.received.map((r) => r.body);
    expect(received.map((b) => b.event)).toEqual([event]);
    expect(keyProblems(ref, received[0], { kind: 'ref', name: 'Webhook payload' })).toEqual([]);
  });
});
