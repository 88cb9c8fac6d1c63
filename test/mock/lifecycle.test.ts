import { beforeEach, describe, expect, it } from 'vitest';
import {
  createMockApp,
  DEMO,
  LIFECYCLE_EVENTS,
  type MockServer,
  startMockServer,
  type WebhookDelivery,
} from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client, obj, results } from './helpers.js';
import { ACK, closedUrl, startReceiver, useReceiver } from './receiver.js';

const { active, multi, pastDue } = DEMO.accounts;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const PAYLOAD_KEYS = [
  'account_ref_id',
  'event',
  'is_active',
  'label_name',
  'subscription_id',
  'timestamp',
  'transaction_id',
];
const FAIL = { status: 500, body: '{"detail": "boom"}' };

describe('mock lifecycle: state changes seen over the API, webhooks posted', () => {
  const mock = useMockServer({ webhookRetry: { delayMs: 5 } });
  const rx = useReceiver();
  const api = client(mock);
  // Runs after useMockServer's reset, which puts the registration back to the (empty) options.
  beforeEach(() => mock.server.webhooks.register(rx.receiver.url));

  const status = async (account: string, query = '') =>
    obj((await api.get(`account/${account}/status/${query}`)).body);
  const fix = (account: string, subscription = 'pro-plan', tier = 'pro') =>
    api.get(
      `fix-subscription/?account_ref_id=${account}&subscription_name=${subscription}&tier_name=${tier}`,
    );
  /** fix-subscription's "nothing to fix": a 200 with an empty body. */
  const expectNothingToFix = async (account: string) => {
    const r = await fix(account);
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
  };
  const invoices = async (account: string, invoiceStatus: string) =>
    obj((await api.get(`invoices/?account_ref_id=${account}&status=${invoiceStatus}&page_size=100`)).body);
  const transactionCount = async (account: string, txStatus: string) =>
    obj((await api.get(`transactions/${account}/?status=${txStatus}`)).body).count;

  it('subscribe creates the account and an active subscription, and posts the exact payload', async () => {
    const before = await api.get('account/new_user/status/');
    expect(before.status).toBe(404);

    const delivery = await mock.server.lifecycle.subscribe({
      account_ref_id: 'new_user',
      subscription: 'pro-plan',
      tier: 'enterprise',
    });

    expect(await status('new_user')).toMatchObject({
      account_ref_id: 'new_user',
      is_active: true,
      customer_email: 'new_user@example.com',
      subscription_tier: { label_name: 'enterprise', product_manage_id: DEMO.products.proPlan.manage_id },
    });
    const [subscription] = mock.server.store.subscriptions('new_user');
    expect(delivery).toEqual({
      event: {
        event: 'subscription-created',
        transaction_id: expect.stringMatching(UUID),
        account_ref_id: 'new_user',
        subscription_id: subscription?.subscription_id,
        is_active: true,
        label_name: 'enterprise',
        timestamp: expect.stringMatching(ISO_UTC),
      },
      url: rx.receiver.url,
      delivered: true,
      attempts: [{ status: 200, ok: true }],
    });
    const [received] = rx.receiver.received;
    expect(rx.receiver.received).toHaveLength(1);
    expect(received?.method).toBe('POST');
    expect(received?.headers['content-type']).toBe('application/json');
    expect(Object.keys(received?.body ?? {}).sort()).toEqual(PAYLOAD_KEYS);
    expect(received?.body).toEqual(delivery.event);
    expect(mock.server.webhooks.deliveries()).toEqual([delivery]);
  });

  it('subscribe defaults to the first subscription product and its first tier', async () => {
    const delivery = await mock.server.lifecycle.subscribe({ account_ref_id: 'defaults' });
    expect(delivery.event.label_name).toBe(DEMO.tiers.proStarter.label_name);
    expect(await status('defaults', '?subscription=pro-plan&tier=starter')).toMatchObject({
      is_active: true,
    });
  });

  it('paymentSucceeded activates, pays the open invoice and adds a completed transaction', async () => {
    expect(await status(pastDue)).toMatchObject({ is_active: false });
    expect(obj((await fix(pastDue)).body).url).toBe(`${mock.server.appUrl}/i/${DEMO.pastDueInvoiceId}`);
    const completed = await transactionCount(pastDue, 'completed');

    const delivery = await mock.server.lifecycle.paymentSucceeded({ account_ref_id: pastDue });

    expect(await status(pastDue)).toMatchObject({ is_active: true });
    await expectNothingToFix(pastDue);
    expect((await invoices(pastDue, 'open')).count).toBe(0);
    const paid = results(await invoices(pastDue, 'paid')).find(
      (i) => i.processor_invoice_id === DEMO.pastDueInvoiceId,
    );
    expect(paid).toMatchObject({ is_paid: true, amount_due: 29, amount_paid: 29 });
    expect(await transactionCount(pastDue, 'completed')).toBe(Number(completed) + 1);
    expect(mock.server.store.transactions(pastDue)[0]).toMatchObject({
      status: 'completed',
      amount: '29.00',
    });
    expect(delivery.event).toMatchObject({
      event: 'payment-succeeded',
      account_ref_id: pastDue,
      subscription_id: DEMO.subscriptions.pastDuePro,
      is_active: true,
      label_name: 'pro',
    });
    expect(rx.receiver.received.map((r) => r.body.event)).toEqual(['payment-succeeded']);
  });

  it('paymentSucceeded with nothing owed records a paid renewal invoice', async () => {
    await mock.server.lifecycle.subscribe({ account_ref_id: 'renewing', subscription: 'team-plan' });
    expect((await invoices('renewing', 'paid')).count).toBe(0);
    const delivery = await mock.server.lifecycle.paymentSucceeded({ account_ref_id: 'renewing' });
    const paid = results(await invoices('renewing', 'paid'));
    expect(paid).toHaveLength(1);
    expect(paid[0]).toMatchObject({
      processor_subscription_id: delivery.event.subscription_id,
      product_manage_id: DEMO.products.teamPlan.manage_id,
      amount_due: 49,
      amount_paid: 49,
    });
    expect(mock.server.store.transactions('renewing')[0]).toMatchObject({
      status: 'completed',
      amount: '49.00',
    });
  });

  it('paymentFailed deactivates and adds a past-due invoice that fix-subscription points at', async () => {
    await expectNothingToFix(active);
    const openBefore = Number((await invoices(active, 'open')).count);
    const failedBefore = Number(await transactionCount(active, 'failed'));

    const delivery = await mock.server.lifecycle.paymentFailed({ account_ref_id: active });

    expect(await status(active)).toMatchObject({ is_active: false });
    const open = await invoices(active, 'open');
    expect(open.count).toBe(openBefore + 1);
    const [newest] = results(open);
    expect(newest).toMatchObject({
      processor_subscription_id: DEMO.subscriptions.activePro,
      amount_due: 29,
      amount_paid: 0,
      is_paid: false,
      status: 'open',
    });
    expect(Date.parse(String(newest?.due_date))).toBeLessThanOrEqual(Date.now());
    expect(obj((await fix(active)).body)).toEqual({ url: newest?.hosted_invoice_url });
    expect(await transactionCount(active, 'failed')).toBe(failedBefore + 1);
    expect(delivery.event).toMatchObject({ event: 'payment-failed', is_active: false, label_name: 'pro' });
  });

  it('cancel deactivates and voids open invoices, so fix-subscription answers the empty body', async () => {
    const delivery = await mock.server.lifecycle.cancel({ account_ref_id: pastDue });
    expect(await status(pastDue)).toMatchObject({ is_active: false });
    await expectNothingToFix(pastDue);
    expect((await invoices(pastDue, 'open')).count).toBe(0);
    expect(results(await invoices(pastDue, 'void')).map((i) => i.processor_invoice_id)).toEqual([
      DEMO.pastDueInvoiceId,
    ]);
    expect(delivery.event).toMatchObject({
      event: 'subscription-cancelled',
      subscription_id: DEMO.subscriptions.pastDuePro,
      is_active: false,
    });
  });

  it('cancelAtPeriodEnd keeps the subscription active; the scheduled end stays in the store', async () => {
    const delivery = await mock.server.lifecycle.cancelAtPeriodEnd({ account_ref_id: active });
    // The reference has no field for a scheduled cancellation, so the status answer does not show it.
    const scheduled = await status(active);
    expect(scheduled.is_active).toBe(true);
    expect(scheduled).not.toHaveProperty('cancel_at_period_end');
    expect(mock.server.store.subscription(DEMO.subscriptions.activePro)?.cancel_at_period_end).toBe(true);
    expect(delivery.event).toMatchObject({ event: 'subscription-cancel-at-period-end', is_active: true });

    await mock.server.lifecycle.cancel({ account_ref_id: active });
    expect((await status(active)).is_active).toBe(false);
    expect(mock.server.store.subscription(DEMO.subscriptions.activePro)?.cancel_at_period_end).toBe(false);
  });

  it('incomplete leaves a new subscription inactive with its first invoice open', async () => {
    await mock.server.lifecycle.subscribe({
      account_ref_id: 'trial',
      subscription: 'pro-plan',
      tier: 'starter',
    });
    const delivery = await mock.server.lifecycle.incomplete({ account_ref_id: 'trial' });
    expect(await status('trial')).toMatchObject({ is_active: false });
    const open = results(await invoices('trial', 'open'));
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({ amount_due: 9, customer_email: 'trial@example.com' });
    expect(obj((await fix('trial', 'pro-plan', 'starter')).body)).toEqual({
      url: open[0]?.hosted_invoice_url,
    });
    expect(await transactionCount('trial', 'failed')).toBe(1);
    expect(delivery.event).toMatchObject({
      event: 'subscription-incomplete',
      is_active: false,
      label_name: 'starter',
    });
    expect(rx.receiver.received.map((r) => r.body.event)).toEqual([
      'subscription-created',
      'subscription-incomplete',
    ]);
  });

  it('picks the subscription by product and tier on an account with several', async () => {
    await mock.server.lifecycle.paymentFailed({ account_ref_id: multi, subscription: 'team-plan' });
    await mock.server.lifecycle.cancelAtPeriodEnd({ account_ref_id: multi, subscription: 'pro-plan' });
    const body = await status(multi);
    const scheduled = (id: string) => mock.server.store.subscription(id)?.cancel_at_period_end === true;
    expect(scheduled(DEMO.subscriptions.multiStarter)).toBe(false);
    expect(scheduled(DEMO.subscriptions.multiEnterprise)).toBe(true);
    expect(body.subscriptions).toEqual([
      expect.objectContaining({
        is_active: false,
        subscription_tier: expect.objectContaining({ label_name: 'starter' }),
      }),
      expect.objectContaining({
        is_active: true,
        subscription_tier: expect.objectContaining({ label_name: 'enterprise' }),
      }),
      expect.objectContaining({
        is_active: false,
        subscription_tier: expect.objectContaining({ label_name: 'basic' }),
      }),
    ]);
    expect(rx.receiver.received.map((r) => r.body.subscription_id)).toEqual([
      DEMO.subscriptions.multiBasic,
      DEMO.subscriptions.multiEnterprise,
    ]);
  });

  it.each([
    ['an unknown account', { account_ref_id: 'nobody' }, /Unknown account nobody/],
    ['an account without subscriptions', { account_ref_id: DEMO.accounts.empty }, /has no subscription/],
    ['an unknown product', { account_ref_id: active, subscription: 'nope' }, /no subscription to nope/],
    ['a tier it does not hold', { account_ref_id: active, tier: 'starter' }, /pro-plan\/starter/],
  ])('rejects %s, changing and posting nothing', async (_, params, message) => {
    const before = JSON.stringify(mock.server.store.subscriptions(active));
    for (const method of [
      'paymentSucceeded',
      'paymentFailed',
      'cancel',
      'cancelAtPeriodEnd',
      'incomplete',
    ] as const) {
      await expect(mock.server.lifecycle[method](params)).rejects.toThrow(message);
    }
    expect(JSON.stringify(mock.server.store.subscriptions(active))).toBe(before);
    expect(rx.receiver.received).toHaveLength(0);
    expect(mock.server.webhooks.deliveries()).toHaveLength(0);
  });

  it('rejects subscribe to an unknown product or tier without creating the account', async () => {
    await expect(
      mock.server.lifecycle.subscribe({ account_ref_id: 'x', subscription: 'ebook' }),
    ).rejects.toThrow(/Unknown subscription product ebook/);
    await expect(
      mock.server.lifecycle.subscribe({ account_ref_id: 'x', subscription: 'pro-plan', tier: 'gold' }),
    ).rejects.toThrow(/Unknown tier gold/);
    expect(mock.server.store.account('x')).toBeUndefined();
  });
});

describe('mock webhooks: delivery, retries and redelivery', () => {
  const mock = useMockServer({ webhookRetry: { attempts: 4, delayMs: 5 } });
  const rx = useReceiver();
  beforeEach(() => mock.server.webhooks.register(rx.receiver.url));

  const fail = () => mock.server.lifecycle.paymentFailed({ account_ref_id: active });

  it('retries the same payload, same transaction_id, until the receiver acknowledges', async () => {
    rx.receiver.script(FAIL, { status: 503, body: '' });
    const delivery = await fail();
    expect(delivery.delivered).toBe(true);
    expect(delivery.attempts).toEqual([
      { status: 500, ok: false, error: 'expected status 200, got 500' },
      { status: 503, ok: false, error: 'expected status 200, got 503' },
      { status: 200, ok: true },
    ]);
    const texts = rx.receiver.received.map((r) => r.text);
    expect(texts).toHaveLength(3);
    expect(new Set(texts).size).toBe(1);
    expect(rx.receiver.received.every((r) => r.body.transaction_id === delivery.event.transaction_id)).toBe(
      true,
    );
  });

  it('gives up after `attempts` tries', async () => {
    rx.receiver.script(FAIL, FAIL, FAIL, FAIL, FAIL);
    const delivery = await fail();
    expect(delivery.delivered).toBe(false);
    expect(delivery.attempts).toHaveLength(4);
    expect(delivery.attempts.every((a) => a.status === 500 && !a.ok)).toBe(true);
    expect(rx.receiver.received).toHaveLength(4);
    // The state change does not depend on the receiver.
    expect(mock.server.store.subscription(DEMO.subscriptions.activePro)?.is_active).toBe(false);
    expect(mock.server.webhooks.deliveries()).toEqual([delivery]);
  });

  it('counts a 200 without {"received": true} as a failure', async () => {
    rx.receiver.script(
      { status: 200, body: '{"ok": true}' },
      { status: 200, body: '{"received": "true"}' },
      { status: 200, body: 'received' },
      { status: 200, body: '{"received": true, "extra": 1}' },
    );
    const delivery = await fail();
    expect(delivery.attempts.map((a) => [a.status, a.ok])).toEqual([
      [200, false],
      [200, false],
      [200, false],
      [200, true],
    ]);
    expect(delivery.attempts[0]?.error).toBe('expected the JSON body {"received": true}');
    expect(delivery.delivered).toBe(true);
  });

  it('waits delayMs before the first retry and doubles it', async () => {
    const server = await startMockServer({
      webhookUrl: rx.receiver.url,
      webhookRetry: { attempts: 3, delayMs: 60 },
    });
    try {
      rx.receiver.script(FAIL, FAIL);
      const delivery = await server.lifecycle.cancel({ account_ref_id: active });
      expect(delivery.delivered).toBe(true);
      const [first, second, third] = rx.receiver.received.map((r) => r.at);
      expect((second ?? 0) - (first ?? 0)).toBeGreaterThanOrEqual(55);
      expect((third ?? 0) - (second ?? 0)).toBeGreaterThanOrEqual(115);
    } finally {
      await server.close();
    }
  });

  it('records connection errors and gives up when nothing listens', async () => {
    mock.server.webhooks.register(await closedUrl());
    const delivery = await fail();
    expect(delivery.delivered).toBe(false);
    expect(delivery.attempts).toHaveLength(4);
    for (const attempt of delivery.attempts) {
      expect(attempt.ok).toBe(false);
      expect(attempt.status).toBeUndefined();
      expect(attempt.error).toMatch(/fetch failed/);
    }
  });

  it('counts a receiver that never answers as failed after timeoutMs', async () => {
    const server = await startMockServer({
      webhookUrl: rx.receiver.url,
      // Long enough for the second attempt's answer on a loaded machine: it is the first that hangs.
      webhookRetry: { attempts: 2, delayMs: 1, timeoutMs: 500 },
    });
    try {
      rx.receiver.script('hang');
      const delivery = await server.lifecycle.cancel({ account_ref_id: active });
      expect(delivery.attempts).toEqual([
        { ok: false, error: 'no answer within 500 ms' },
        { status: 200, ok: true },
      ]);
    } finally {
      await server.close();
    }
  });

  it('redeliver posts the very same payload again, as after a lost 200', async () => {
    const first = await fail();
    const again = await mock.server.webhooks.redeliver(first.event.transaction_id);
    expect(again.event).toEqual(first.event);
    expect(again.delivered).toBe(true);
    const [one, two] = rx.receiver.received;
    expect(rx.receiver.received).toHaveLength(2);
    expect(two?.text).toBe(one?.text);
    expect(mock.server.webhooks.deliveries().map((d) => d.event.transaction_id)).toEqual([
      first.event.transaction_id,
      first.event.transaction_id,
    ]);
    await expect(mock.server.webhooks.redeliver('00000000-0000-4000-8000-000000000000')).rejects.toThrow(
      /No webhook with transaction_id/,
    );
  });

  it('gives every webhook its own transaction_id', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await fail()).event.transaction_id);
    expect(new Set(ids).size).toBe(3);
  });

  it('without a registered URL, still changes the state and logs the webhook undelivered', async () => {
    mock.server.webhooks.unregister();
    const delivery = await mock.server.lifecycle.cancel({ account_ref_id: active });
    expect(delivery).toEqual({
      event: expect.objectContaining({ event: 'subscription-cancelled' }),
      url: '',
      delivered: false,
      attempts: [],
    });
    expect(mock.server.store.subscription(DEMO.subscriptions.activePro)?.is_active).toBe(false);
    expect(rx.receiver.received).toHaveLength(0);
    expect(mock.server.webhooks.deliveries()).toEqual([delivery]);

    // Registering later and redelivering hands the receiver what it missed.
    mock.server.webhooks.register(rx.receiver.url);
    const late = await mock.server.webhooks.redeliver(delivery.event.transaction_id);
    expect(late.delivered).toBe(true);
    expect(rx.receiver.received[0]?.body).toEqual(delivery.event);
  });

  it('registering again replaces the receiver', async () => {
    const other = await startReceiver();
    try {
      mock.server.webhooks.register(other.url);
      const delivery = await fail();
      expect(delivery.url).toBe(other.url);
      expect(other.received).toHaveLength(1);
      expect(rx.receiver.received).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it('refuses a webhook URL that is not absolute http(s)', () => {
    expect(() => mock.server.webhooks.register('/hooks')).toThrow(TypeError);
    expect(() => mock.server.webhooks.register('ftp://127.0.0.1/hooks')).toThrow(TypeError);
  });

  it('refuses retry options that would never deliver', async () => {
    await expect(startMockServer({ webhookRetry: { attempts: 0 } })).rejects.toThrow(RangeError);
    await expect(startMockServer({ webhookRetry: { delayMs: -1 } })).rejects.toThrow(RangeError);
  });

  it('reset abandons retries under way and empties the log', async () => {
    const server = await startMockServer({
      webhookUrl: rx.receiver.url,
      webhookRetry: { attempts: 5, delayMs: 5_000 },
    });
    try {
      rx.receiver.script(FAIL);
      const pending = server.lifecycle.cancel({ account_ref_id: active });
      await expect.poll(() => rx.receiver.received.length).toBe(1);
      server.reset();
      const delivery: WebhookDelivery = await pending;
      expect(delivery.delivered).toBe(false);
      // The first attempt is logged only if its answer came back before the reset (the receiver
      // counts the request when it arrives, so either may come first); no retry was ever sent.
      expect(delivery.attempts.length).toBeLessThanOrEqual(1);
      expect(delivery.attempts.every((a) => !a.ok)).toBe(true);
      expect(rx.receiver.received).toHaveLength(1);
      expect(server.webhooks.deliveries()).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('mock webhooks: options and the in-process app', () => {
  const rx = useReceiver();

  it('options.webhookUrl registers at start and again on reset', async () => {
    const server: MockServer = await startMockServer({ webhookUrl: rx.receiver.url });
    try {
      server.webhooks.unregister();
      await server.lifecycle.cancel({ account_ref_id: active });
      expect(server.webhooks.deliveries()).toHaveLength(1);
      server.reset();
      expect(server.webhooks.deliveries()).toEqual([]);
      const delivery = await server.lifecycle.cancel({ account_ref_id: active });
      expect(delivery.url).toBe(rx.receiver.url);
      expect(rx.receiver.received).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('createMockApp simulates the lifecycle and posts webhooks too', async () => {
    const app = createMockApp({ webhookUrl: rx.receiver.url });
    rx.receiver.script(FAIL, ACK);
    const delivery = await app.lifecycle.paymentFailed({ account_ref_id: active });
    expect(delivery.delivered).toBe(true);
    expect(delivery.attempts.map((a) => a.ok)).toEqual([false, true]);
    const r = await app.fetch(`http://127.0.0.1/api/account/${active}/status/`, {
      headers: { authorization: `Bearer ${app.apiKey}` },
    });
    expect(await r.json()).toMatchObject({ is_active: false });
    expect(app.webhooks.deliveries()).toHaveLength(1);
  });

  it('names every event it can send', () => {
    expect([...LIFECYCLE_EVENTS].sort()).toEqual(
      [
        'payment-failed',
        'payment-succeeded',
        'subscription-cancel-at-period-end',
        'subscription-cancelled',
        'subscription-created',
        'subscription-incomplete',
      ].sort(),
    );
  });
});
