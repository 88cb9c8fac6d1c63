import { afterEach, describe, expect, it } from 'vitest';
import {
  type AccessCache,
  createAccessCache,
  createNodeWebhookHandler,
  createWebhookHandler,
  InvalidRequestError,
  parseWebhook,
  WebhookError,
  type WebhookEvent,
  type WebhookHandlerOptions,
} from '../../src/index.js';
import { caught, clientFor, type LoopbackServer, serveFetch, serveNode, useMockServer } from '../helpers.js';
import { event } from '../webhooks/event.js';

const mock = useMockServer();
const statusRequests = (account: string) =>
  mock.server.requests.count({ method: 'GET', path: `/api/account/${account}/status/` });

const receivers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const adapters: [string, (options: WebhookHandlerOptions) => Promise<LoopbackServer>][] = [
  ['createWebhookHandler', (options) => serveFetch(createWebhookHandler(options))],
  ['createNodeWebhookHandler', (options) => serveNode(createNodeWebhookHandler(options))],
];

async function post(receiver: LoopbackServer, body: WebhookEvent): Promise<Response> {
  return fetch(`${receiver.url}/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe.each(adapters)('%s with access', (_name, serve) => {
  it("drops the event's account before onEvent runs and before the 200", async () => {
    const access = createAccessCache(clientFor(mock.server));
    expect(await access.isActive({ account_ref_id: 'acct_active' })).toBe(true);
    const seen: { invalidations: number; active: boolean }[] = [];
    const receiver = await serve({
      access,
      onEvent: async (e) => {
        // Inside onEvent the cache already asks the service anew.
        seen.push({
          invalidations: access.stats().invalidations,
          active: await access.isActive({ account_ref_id: e.account_ref_id }),
        });
      },
    });
    receivers.push(receiver);
    mock.server.store.setSubscriptionActive(subscriptionOf('acct_active'), false);
    const response = await post(receiver, event({ account_ref_id: 'acct_active', is_active: false }));
    expect(response.status).toBe(200);
    expect(seen).toEqual([{ invalidations: 1, active: false }]);
    expect(statusRequests('acct_active')).toBe(2);
  });

  it('never takes the payload as an answer: a forged is_active: true grants nothing', async () => {
    const access = createAccessCache(clientFor(mock.server));
    const receiver = await serve({ access, onEvent: () => {} });
    receivers.push(receiver);
    expect(await access.isActive({ account_ref_id: 'acct_past_due' })).toBe(false);
    const forged = event({ account_ref_id: 'acct_past_due', is_active: true, label_name: 'pro' });
    expect((await post(receiver, forged)).status).toBe(200);
    // One extra lookup is all a forged delivery costs.
    expect(await access.isActive({ account_ref_id: 'acct_past_due' })).toBe(false);
    expect(statusRequests('acct_past_due')).toBe(2);
  });

  it('a delivery naming no account (account_ref_id "") is malformed: 400, not a 500 redelivered for ever', async () => {
    const access = createAccessCache(clientFor(mock.server));
    let ran = 0;
    const errors: unknown[] = [];
    const receiver = await serve({
      access,
      onEvent: () => {
        ran++;
      },
      onError: (e) => void errors.push(e),
    });
    receivers.push(receiver);
    for (const account_ref_id of ['', '\ud800']) {
      const response = await post(receiver, event({ account_ref_id }));
      expect(response.status, JSON.stringify(account_ref_id)).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain('account_ref_id');
    }
    expect((await post(receiver, event({ transaction_id: '' }))).status).toBe(400);
    expect(ran).toBe(0);
    expect(errors).toEqual([]);
    expect(access.stats().invalidations).toBe(0);
    const error = await caught(() => parseWebhook(JSON.stringify(event({ account_ref_id: '' }))));
    expect(error).toBeInstanceOf(WebhookError);
    expect((error as WebhookError).issues).toEqual([
      { path: ['account_ref_id'], message: 'must be a non-empty string', code: 'custom' },
    ]);
  });

  it('answers 500 (the sender retries) and skips onEvent when invalidation throws', async () => {
    let ran = false;
    const broken = { invalidate: () => Promise.reject(new Error('down')) } as unknown as AccessCache;
    const receiver = await serve({
      access: broken,
      onEvent: () => {
        ran = true;
      },
    });
    receivers.push(receiver);
    expect((await post(receiver, event())).status).toBe(500);
    expect(ran).toBe(false);
  });
});

describe('webhook handlers: the access option', () => {
  it('is checked when the handler is made', async () => {
    for (const make of [createWebhookHandler, createNodeWebhookHandler]) {
      const error = await caught(() => make({ onEvent: () => {}, access: {} as never }));
      expect(error).toBeInstanceOf(InvalidRequestError);
    }
  });

  it("the mock's lifecycle webhook reaches the handler, and the cache answers the new state", async () => {
    const access = createAccessCache(clientFor(mock.server), { ttlMs: 600_000 });
    const receiver = await serveFetch(createWebhookHandler({ access, onEvent: () => {} }));
    receivers.push(receiver);
    mock.server.webhooks.register(`${receiver.url}/webhooks`);
    expect(await access.isActive({ account_ref_id: 'acct_active' })).toBe(true);
    await mock.server.lifecycle.paymentFailed({ account_ref_id: 'acct_active' });
    expect(await access.isActive({ account_ref_id: 'acct_active' })).toBe(false);
    await mock.server.lifecycle.paymentSucceeded({ account_ref_id: 'acct_active' });
    expect(await access.isActive({ account_ref_id: 'acct_active' })).toBe(true);
  });
});

function subscriptionOf(account: string): string {
  const id = mock.server.store.subscriptions(account)[0]?.subscription_id;
  if (!id) throw new Error(`no subscription for ${account}`);
  return id;
}
