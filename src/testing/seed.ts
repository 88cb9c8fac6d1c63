import type {
  AccountInput,
  InvoiceInput,
  InvoiceStatus,
  ProductRecord,
  SubscriptionInput,
  SubscriptionRecord,
  TierRecord,
  TransactionInput,
  TransactionStatus,
  UsageEventInput,
} from './records.js';
import { addDays } from './time.js';

/**
 * Which data a store starts with: `'demo'` is the documented demo data set; `'empty'` has the
 * same catalog (products and tiers) but no accounts, so every account-scoped call answers 404
 * until a test adds what it needs.
 */
export type SeedName = 'demo' | 'empty';

/**
 * Identifiers of the demo seed. Docs, examples and tests refer to these instead of repeating
 * string literals, so a change to the seed shows up as a type error rather than a silent mismatch.
 */
export const DEMO = {
  /** Default API key of the mock (deliberately not shaped like a real key). */
  apiKey: 'mock-api-key-demo',
  /** Default signing key for hosted-link tokens. */
  signingKey: 'mock-signing-key-demo',
  /** The seeded accounts' `account_ref_id`s. */
  accounts: {
    /** One active subscription pro-plan/pro, 45 invoices, 30 transactions, 1000 credits. */
    active: 'acct_active',
    /** Three subscriptions (two active): the multiple status form. */
    multi: 'acct_multi',
    /** pro-plan/pro inactive with an open past-due invoice: fix-subscription returns a url. */
    pastDue: 'acct_past_due',
    /** Exists, holds nothing. */
    empty: 'acct_empty',
  },
  /** The `customer_email` of each seeded account, under the same keys as {@link DEMO.accounts}. */
  emails: {
    /** E-mail of `acct_active`. */
    active: 'active@example.com',
    /** E-mail of `acct_multi`. */
    multi: 'multi@example.com',
    /** E-mail of `acct_past_due`. */
    pastDue: 'past-due@example.com',
    /** E-mail of `acct_empty`. */
    empty: 'empty@example.com',
  },
  /** The catalog's products: the ids each endpoint asks for, per product. */
  products: {
    /**
     * Subscription product, saas_only with saas_mode: resolves by `subscription_name`; tiers starter, pro,
     * enterprise.
     */
    proPlan: {
      /** Its `manage_id` (`product_manage_id` elsewhere). */
      manage_id: 'prod_pro_plan',
      /** Its `label_name`: `subscription_name` of tiers, status filters, resolve and fix-subscription. */
      label_name: 'pro-plan',
      /** Its `product_code`. */
      product_code: 'pro-plan',
      /** Id of its hosted page, `{app_url}/p/pu_pro_plan`. */
      product_url_id: 'pu_pro_plan',
    },
    /** Subscription product, not saas_only (resolve answers 404); tier basic. */
    teamPlan: {
      /** Its `manage_id`. */
      manage_id: 'prod_team_plan',
      /** Its `label_name`. */
      label_name: 'team-plan',
      /** Its `product_code`. */
      product_code: 'team-plan',
      /** Id of its hosted page. */
      product_url_id: 'pu_team_plan',
    },
    /** Single product at `'19.00'`, saas_only: resolves by `product_name` (with `email`). */
    ebook: {
      /** Its `manage_id`. */
      manage_id: 'prod_ebook',
      /** Its `label_name`, the `product_name` of resolve. */
      label_name: 'ebook',
      /** Its `product_code`. */
      product_code: 'ebook',
      /** Id of its hosted page, `{app_url}/p/pu_ebook`. */
      product_url_id: 'pu_ebook',
    },
    /** Single product at `'250.00'`, not saas_only. */
    consulting: {
      /** Its `manage_id`. */
      manage_id: 'prod_consulting',
      /** Its `label_name`. */
      label_name: 'consulting',
      /** Its `product_code`. */
      product_code: 'consulting',
      /** Id of its hosted page. */
      product_url_id: 'pu_consulting',
    },
    /** Usage model `prepaid_credits`, meter `credits`: balance and debit; entitlement `export`. */
    aiAssistant: {
      /** Its `manage_id`. */
      manage_id: 'prod_ai_assistant',
      /** Its `label_name`. */
      label_name: 'ai-assistant',
      /** Its `product_code`, as balance, debit and entitlement calls take it. */
      product_code: 'ai-assistant',
      /** Id of its hosted page. */
      product_url_id: 'pu_ai_assistant',
    },
    /** Usage model `metered_postpaid`, meter `api_calls`: usage events and summaries. */
    apiGateway: {
      /** Its `manage_id`. */
      manage_id: 'prod_api_gateway',
      /** Its `label_name`. */
      label_name: 'api-gateway',
      /** Its `product_code`, as usage event and summary calls take it. */
      product_code: 'api-gateway',
      /** Id of its hosted page. */
      product_url_id: 'pu_api_gateway',
    },
  },
  /** The catalog's tiers: the product label, tier label and hosted page id of each. */
  tiers: {
    /** pro-plan/starter at `'9.00'`. */
    proStarter: {
      /** The owning product's `label_name`. */
      subscription_name: 'pro-plan',
      /** The tier's `label_name`. */
      label_name: 'starter',
      /** Id of its hosted page, `{app_url}/t/tu_pro_plan_starter`. */
      tier_url_id: 'tu_pro_plan_starter',
    },
    /** pro-plan/pro at `'29.00'`, marked popular; the tier of `acct_active` and `acct_past_due`. */
    proPro: {
      /** The owning product's `label_name`. */
      subscription_name: 'pro-plan',
      /** The tier's `label_name`. */
      label_name: 'pro',
      /** Id of its hosted page. */
      tier_url_id: 'tu_pro_plan_pro',
    },
    /** pro-plan/enterprise at `'99.00'`. */
    proEnterprise: {
      /** The owning product's `label_name`. */
      subscription_name: 'pro-plan',
      /** The tier's `label_name`. */
      label_name: 'enterprise',
      /** Id of its hosted page. */
      tier_url_id: 'tu_pro_plan_enterprise',
    },
    /** team-plan/basic at `'49.00'`. */
    teamBasic: {
      /** The owning product's `label_name`. */
      subscription_name: 'team-plan',
      /** The tier's `label_name`. */
      label_name: 'basic',
      /** Id of its hosted page. */
      tier_url_id: 'tu_team_plan_basic',
    },
  },
  /** Meter codes. */
  meters: {
    /** Prepaid credits of ai-assistant. */
    credits: 'credits',
    /** Postpaid usage of api-gateway. */
    apiCalls: 'api_calls',
  },
  /** Entitlement codes. */
  entitlements: {
    /**
     * Granted to `acct_active` on ai-assistant; any other check of a known account answers `has_access:
     * false`.
     */
    export: 'export',
  },
  /** Starting `credits` balance of acct_active on ai-assistant. */
  initialCredits: 1000,
  /** `subscription_id`s of the seeded subscriptions (invoices carry them as `processor_subscription_id`). */
  subscriptions: {
    /** acct_active on pro-plan/pro, active. */
    activePro: 'sub_mock_0001',
    /** acct_multi on pro-plan/starter, inactive (replaced by enterprise). */
    multiStarter: 'sub_mock_0002',
    /** acct_multi on pro-plan/enterprise, active. */
    multiEnterprise: 'sub_mock_0003',
    /** acct_multi on team-plan/basic, active. */
    multiBasic: 'sub_mock_0004',
    /** acct_past_due on pro-plan/pro, inactive with an open invoice. */
    pastDuePro: 'sub_mock_0005',
  },
  /** The open, past-due invoice of acct_past_due that fix-subscription points at. */
  pastDueInvoiceId: 'in_past_due_open',
  /** Seeded records per account and status (statuses not listed have none). */
  counts: {
    /** 45 invoices and 30 transactions: three and two pages at the default page size of 20. */
    acct_active: {
      /** Invoices per status. */
      invoices: {
        /** Draft invoices. */
        draft: 3,
        /** Open invoices. */
        open: 8,
        /** Paid invoices. */
        paid: 25,
        /** Uncollectible invoices. */
        uncollectible: 4,
        /** Void invoices. */
        void: 5,
      },
      /** Transactions per status. */
      transactions: {
        /** Pending transactions. */
        pending: 5,
        /** Completed transactions. */
        completed: 18,
        /** Failed transactions. */
        failed: 4,
        /** Cancelled transactions. */
        cancelled: 3,
      },
    },
    /** One paid invoice and one completed transaction per subscription. */
    acct_multi: {
      /** Invoices per status. */
      invoices: {
        /** Paid invoices. */
        paid: 3,
      },
      /** Transactions per status. */
      transactions: {
        /** Completed transactions. */
        completed: 3,
      },
    },
    /** Two paid months, then the open invoice of a failed payment. */
    acct_past_due: {
      /** Invoices per status. */
      invoices: {
        /** Paid invoices. */
        paid: 2,
        /** The open, past-due invoice ({@link DEMO.pastDueInvoiceId}). */
        open: 1,
      },
      /** Transactions per status. */
      transactions: {
        /** Completed transactions. */
        completed: 2,
        /** The failed payment. */
        failed: 1,
      },
    },
    /** No records. */
    acct_empty: {
      /** None. */
      invoices: {},
      /** None. */
      transactions: {},
    },
  },
  /** Past api-gateway/api_calls usage of acct_active, so summary ranges are testable. */
  usage: {
    /** The seeded usage events, oldest first. */
    events: [
      {
        /** Its idempotency key. */
        event_key: 'seed_usage_0001',
        /** When the usage happened. */
        timestamp: '2026-01-05T10:00:00Z',
        /** Units of `api_calls` used. */
        quantity: 100,
      },
      {
        /** Its idempotency key. */
        event_key: 'seed_usage_0002',
        /** When the usage happened. */
        timestamp: '2026-01-20T12:30:00Z',
        /** Units of `api_calls` used. */
        quantity: 250,
      },
      {
        /** Its idempotency key. */
        event_key: 'seed_usage_0003',
        /** When the usage happened. */
        timestamp: '2026-02-03T08:15:00Z',
        /** Units of `api_calls` used. */
        quantity: 50,
      },
      {
        /** Its idempotency key. */
        event_key: 'seed_usage_0004',
        /** When the usage happened. */
        timestamp: '2026-02-28T23:59:59Z',
        /** Units of `api_calls` used. */
        quantity: 600,
      },
      {
        /** Its idempotency key. */
        event_key: 'seed_usage_0005',
        /** When the usage happened. */
        timestamp: '2026-03-10T00:00:00Z',
        /** Units of `api_calls` used. */
        quantity: 1000,
      },
    ],
    /** Sum of the events' quantities: the `total_usage` of a summary without a range. */
    total: 2000,
  },
} as const;

const P = DEMO.products;

function catalog(): { products: ProductRecord[]; tiers: TierRecord[] } {
  const products: ProductRecord[] = [
    { ...P.proPlan, title: 'Pro Plan', type: 'subscription', saas_only: true, saas_mode: true, meters: [] },
    {
      ...P.teamPlan,
      title: 'Team Plan',
      type: 'subscription',
      saas_only: false,
      saas_mode: false,
      meters: [],
    },
    {
      ...P.ebook,
      title: 'E-book',
      type: 'single',
      saas_only: true,
      saas_mode: false,
      price: '19.00',
      meters: [],
    },
    {
      ...P.consulting,
      title: 'Consulting',
      type: 'single',
      saas_only: false,
      saas_mode: false,
      price: '250.00',
      meters: [],
    },
    {
      ...P.aiAssistant,
      title: 'AI Assistant',
      type: 'single',
      saas_only: false,
      saas_mode: false,
      usage_model: 'prepaid_credits',
      meters: [DEMO.meters.credits],
    },
    {
      ...P.apiGateway,
      title: 'API Gateway',
      type: 'single',
      saas_only: false,
      saas_mode: false,
      usage_model: 'metered_postpaid',
      meters: [DEMO.meters.apiCalls],
    },
  ];
  const tier = (
    key: keyof typeof DEMO.tiers,
    productManageId: string,
    fields: Pick<TierRecord, 'name' | 'description' | 'price' | 'features' | 'is_popular'>,
  ): TierRecord => ({
    label_name: DEMO.tiers[key].label_name,
    tier_url_id: DEMO.tiers[key].tier_url_id,
    billing_cycle: 'monthly',
    product_manage_id: productManageId,
    ...fields,
  });
  const tiers: TierRecord[] = [
    tier('proStarter', P.proPlan.manage_id, {
      name: 'Starter',
      description: 'For individuals getting started',
      price: '9.00',
      features: 'Up to 3 projects, Email support',
      is_popular: false,
    }),
    tier('proPro', P.proPlan.manage_id, {
      name: 'Pro',
      description: 'For growing teams',
      price: '29.00',
      features: 'Unlimited projects, Priority support, Exports',
      is_popular: true,
    }),
    tier('proEnterprise', P.proPlan.manage_id, {
      name: 'Enterprise',
      description: 'For organisations with advanced needs',
      price: '99.00',
      features: 'Unlimited projects, SSO, Dedicated support, Exports',
      is_popular: false,
    }),
    tier('teamBasic', P.teamPlan.manage_id, {
      name: 'Basic',
      description: 'Shared workspace for small teams',
      price: '49.00',
      features: 'Up to 10 seats, Shared workspace',
      is_popular: false,
    }),
  ];
  return { products, tiers };
}

/**
 * Expands `{ a: 2, b: 1 }` into an interleaved sequence (`a b a`) with smooth weighted
 * round-robin, so every page of a list shows a mix of statuses, deterministically.
 */
export function spread<K extends string>(counts: Partial<Record<K, number>>): K[] {
  const entries = Object.entries(counts) as [K, number][];
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  const current = new Map<K, number>(entries.map(([k]) => [k, 0]));
  const out: K[] = [];
  for (let i = 0; i < total; i++) {
    let best: K | undefined;
    for (const [k, weight] of entries) {
      const value = (current.get(k) ?? 0) + weight;
      current.set(k, value);
      if (best === undefined || value > (current.get(best) ?? 0)) best = k;
    }
    if (best === undefined) break;
    current.set(best, (current.get(best) ?? 0) - total);
    out.push(best);
  }
  return out;
}

function seedActive(store: SeedTarget): void {
  const account = DEMO.accounts.active;
  const email = DEMO.emails.active;
  store.addAccount({ account_ref_id: account, customer_email: email, created_at: '2026-01-01T08:00:00Z' });
  const sub = store.addSubscription({
    account_ref_id: account,
    product_manage_id: P.proPlan.manage_id,
    tier_label_name: 'pro',
    is_active: true,
    created_at: '2026-01-02T09:00:00Z',
    updated_at: '2026-01-02T09:00:00Z',
  });
  const statuses = spread<InvoiceStatus>(DEMO.counts.acct_active.invoices);
  statuses.forEach((status, i) => {
    const invoiceDate = addDays('2026-01-02T09:00:00Z', 6 * i);
    const oneOff = i % 9 === 4 ? P.ebook : i % 9 === 8 ? P.consulting : undefined;
    const amount = oneOff === P.ebook ? 19 : oneOff === P.consulting ? 250 : 29;
    store.addInvoice({
      account_ref_id: account,
      customer_email: email,
      product_manage_id: oneOff?.manage_id ?? P.proPlan.manage_id,
      processor_subscription_id: oneOff ? '' : sub.subscription_id,
      amount_due: amount,
      status,
      invoice_date: invoiceDate,
      due_date: addDays(invoiceDate, 14),
      period_start: oneOff ? null : invoiceDate,
      period_end: oneOff ? null : addDays(invoiceDate, 30),
      created_at: invoiceDate,
      updated_at: status === 'draft' || status === 'open' ? invoiceDate : addDays(invoiceDate, 1),
    });
  });
  const amounts = ['29.00', '19.00', '250.00'];
  spread<TransactionStatus>(DEMO.counts.acct_active.transactions).forEach((status, i) => {
    const createdAt = addDays('2026-01-02T09:05:00Z', 9 * i);
    store.addTransaction({
      account_ref_id: account,
      status,
      amount: amounts[i % amounts.length] ?? '29.00',
      created_at: createdAt,
      updated_at: status === 'pending' ? createdAt : addDays(createdAt, 1),
    });
  });
  store.setBalance(account, P.aiAssistant.product_code, DEMO.meters.credits, DEMO.initialCredits);
  store.setEntitlement(account, P.aiAssistant.product_code, DEMO.entitlements.export, true);
  for (const event of DEMO.usage.events) {
    store.recordUsage({
      ...event,
      account_ref_id: account,
      product_code: P.apiGateway.product_code,
      meter_code: DEMO.meters.apiCalls,
    });
  }
}

function seedMulti(store: SeedTarget): void {
  const account = DEMO.accounts.multi;
  const email = DEMO.emails.multi;
  store.addAccount({ account_ref_id: account, customer_email: email, created_at: '2026-01-05T09:00:00Z' });
  const subscriptions = [
    { product: P.proPlan, tier: 'starter', price: 9, active: false, created: '2026-01-05T10:00:00Z' },
    { product: P.proPlan, tier: 'enterprise', price: 99, active: true, created: '2026-02-05T10:00:00Z' },
    { product: P.teamPlan, tier: 'basic', price: 49, active: true, created: '2026-03-01T12:00:00Z' },
  ];
  for (const s of subscriptions) {
    const sub = store.addSubscription({
      account_ref_id: account,
      product_manage_id: s.product.manage_id,
      tier_label_name: s.tier,
      is_active: s.active,
      created_at: s.created,
      // The starter subscription ended when the account upgraded to enterprise.
      updated_at: s.active ? s.created : '2026-02-05T10:00:00Z',
    });
    store.addInvoice({
      account_ref_id: account,
      customer_email: email,
      product_manage_id: s.product.manage_id,
      processor_subscription_id: sub.subscription_id,
      amount_due: s.price,
      status: 'paid',
      invoice_date: s.created,
      due_date: addDays(s.created, 14),
      period_start: s.created,
      period_end: addDays(s.created, 30),
      created_at: s.created,
      updated_at: addDays(s.created, 1),
    });
    store.addTransaction({
      account_ref_id: account,
      status: 'completed',
      amount: `${s.price}.00`,
      created_at: s.created,
      updated_at: s.created,
    });
  }
}

function seedPastDue(store: SeedTarget): void {
  const account = DEMO.accounts.pastDue;
  const email = DEMO.emails.pastDue;
  store.addAccount({ account_ref_id: account, customer_email: email, created_at: '2026-01-10T07:00:00Z' });
  const sub = store.addSubscription({
    account_ref_id: account,
    product_manage_id: P.proPlan.manage_id,
    tier_label_name: 'pro',
    is_active: false,
    created_at: '2026-01-10T08:00:00Z',
    updated_at: '2026-03-13T08:00:00Z',
  });
  const months: { date: string; status: InvoiceStatus; tx: TransactionStatus }[] = [
    { date: '2026-01-10T08:00:00Z', status: 'paid', tx: 'completed' },
    { date: '2026-02-10T08:00:00Z', status: 'paid', tx: 'completed' },
    { date: '2026-03-10T08:00:00Z', status: 'open', tx: 'failed' },
  ];
  for (const m of months) {
    store.addInvoice({
      ...(m.status === 'open' ? { processor_invoice_id: DEMO.pastDueInvoiceId } : {}),
      account_ref_id: account,
      customer_email: email,
      product_manage_id: P.proPlan.manage_id,
      processor_subscription_id: sub.subscription_id,
      amount_due: 29,
      status: m.status,
      invoice_date: m.date,
      due_date: addDays(m.date, 2),
      period_start: m.date,
      period_end: addDays(m.date, 30),
      created_at: m.date,
      updated_at: m.status === 'paid' ? addDays(m.date, 1) : addDays(m.date, 3),
    });
    store.addTransaction({
      account_ref_id: account,
      status: m.tx,
      amount: '29.00',
      created_at: m.date,
      updated_at: addDays(m.date, 1),
    });
  }
}

/**
 * What a seed writes through: the `MockStore` methods it calls (a store is one). Declared here so
 * the seed does not import the store that loads it.
 */
export interface SeedTarget {
  addProduct(product: ProductRecord): unknown;
  addTier(tier: TierRecord): unknown;
  addAccount(input: AccountInput): unknown;
  addSubscription(input: SubscriptionInput): SubscriptionRecord;
  addInvoice(input: InvoiceInput): unknown;
  addTransaction(input: TransactionInput): unknown;
  setEntitlement(accountRefId: string, productCode: string, entitlementCode: string, granted: boolean): void;
  setBalance(accountRefId: string, productCode: string, meterCode: string, balance: number): void;
  recordUsage(input: UsageEventInput): unknown;
}

/**
 * Loads a seed into an empty store through its public methods, so the seed exercises the same
 * code paths (and id counters) as records added by tests.
 */
export function loadSeed(store: SeedTarget, seed: SeedName): void {
  const { products, tiers } = catalog();
  for (const product of products) store.addProduct(product);
  for (const tier of tiers) store.addTier(tier);
  if (seed === 'empty') return;
  seedActive(store);
  seedMulti(store);
  seedPastDue(store);
  store.addAccount({
    account_ref_id: DEMO.accounts.empty,
    customer_email: DEMO.emails.empty,
    created_at: '2026-01-15T12:00:00Z',
  });
}
