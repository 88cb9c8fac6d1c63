import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createMockApp,
  DEMO,
  LIFECYCLE_EVENTS,
  type MockApp,
  type MockServer,
  startMockServer,
} from '../../src/testing/index.js';
import { answerOf, obj } from './helpers.js';
import { startReceiver, useReceiver } from './receiver.js';

const ORIGIN = 'http://mock.test';
const UNAUTHORIZED = { detail: 'Invalid API key' };

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** Plain requests to the control surface (`/_mock/...`) or the API (`/api/...`), Bearer key by default. */
function caller(fetchFn: Fetch, origin: string, apiKey: string) {
  return async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const response = await fetchFn(`${origin}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return answerOf(response);
  };
}

describe('control surface in process (createMockApp)', () => {
  let app: MockApp;
  let call: ReturnType<typeof caller>;
  beforeEach(() => {
    app = createMockApp();
    call = caller(app.fetch, ORIGIN, app.apiKey);
  });

  describe('auth: the API key in either header, the API 401 otherwise', () => {
    const routes: [string, string, unknown?][] = [
      ['GET', '/_mock/faults'],
      ['POST', '/_mock/faults', { status: 503 }],
      ['DELETE', '/_mock/faults'],
      ['GET', '/_mock/requests'],
      ['DELETE', '/_mock/requests'],
      ['GET', '/_mock/lifecycle'],
      ['POST', '/_mock/lifecycle/payment-failed', { account_ref_id: DEMO.accounts.active }],
      ['GET', '/_mock/webhooks/receiver'],
      ['PUT', '/_mock/webhooks/receiver', { url: 'http://127.0.0.1:9/x' }],
      ['DELETE', '/_mock/webhooks/receiver'],
      ['GET', '/_mock/webhooks/deliveries'],
      ['POST', '/_mock/webhooks/deliveries/x/redeliver'],
      ['POST', '/_mock/reset'],
      ['GET', '/_mock/nothing-here'],
    ];
    it.each(routes)(
      '%s %s without a key, or with a wrong one, is a 401 and does nothing',
      async (m, p, b) => {
        const cases: Record<string, string>[] = [
          { authorization: '' },
          { authorization: 'Bearer wrong' },
          { authorization: '', 'x-api-key': 'wrong' },
        ];
        for (const headers of cases) {
          const r = await call(m, p, b, headers);
          expect(r.status).toBe(401);
          expect(r.body).toEqual(UNAUTHORIZED);
          expect(r.headers.get('www-authenticate')).toBe('Bearer');
        }
        expect(app.faults.size).toBe(0);
        expect(app.webhooks.deliveries()).toEqual([]);
      },
    );

    it('accepts X-API-Key as well as Bearer, and the one right header among a wrong one', async () => {
      expect(
        (await call('GET', '/_mock/faults', undefined, { authorization: '', 'x-api-key': app.apiKey }))
          .status,
      ).toBe(200);
      expect((await call('GET', '/_mock/faults', undefined, { 'x-api-key': 'wrong' })).status).toBe(200);
    });

    it('a reset without the key leaves the fault, the log and the store alone', async () => {
      app.faults.add({ status: 500, times: 3 });
      app.store.setBalance(DEMO.accounts.active, 'ai-assistant', 'credits', 1);
      await call('GET', '/api/products/', undefined, { authorization: '' });
      expect((await call('POST', '/_mock/reset', undefined, { authorization: '' })).status).toBe(401);
      expect(app.faults.size).toBe(1);
      expect(app.requests.count()).toBe(1);
      expect(app.store.balance(DEMO.accounts.active, 'ai-assistant', 'credits')).toBe(1);
    });
  });

  describe('routing', () => {
    it('answers 405 with the API wording for another method on a known path', async () => {
      const r = await call('PATCH', '/_mock/faults');
      expect(r.status).toBe(405);
      expect(r.body).toEqual({ detail: 'Method "PATCH" not allowed.' });
      expect((await call('GET', '/_mock/reset')).status).toBe(405);
    });

    it('accepts a trailing slash, and answers 404 for unknown control paths', async () => {
      expect((await call('GET', '/_mock/faults/')).body).toEqual({ faults: [] });
      const r = await call('GET', '/_mock/nope');
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ detail: 'Not found.' });
    });

    it('control requests are neither recorded nor subject to faults', async () => {
      app.faults.add({ status: 503, times: Number.POSITIVE_INFINITY });
      const r = await call('GET', '/_mock/requests');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ requests: [] });
      expect(app.requests.count()).toBe(0);
    });
  });

  describe('faults', () => {
    it('POST queues a fault that the next matching API call sees, GET lists it until used', async () => {
      const fault = { method: 'get', path: '/api/invoices/', status: 503, headers: { 'retry-after': '2' } };
      const added = await call('POST', '/_mock/faults', fault);
      expect(added.status).toBe(201);
      expect(added.body).toEqual({ fault });
      expect((await call('GET', '/_mock/faults')).body).toEqual({ faults: [fault] });

      // Another path does not consume it.
      expect((await call('GET', '/api/products/')).status).toBe(200);
      const hit = await call('GET', `/api/invoices/?account_ref_id=${DEMO.accounts.active}`);
      expect(hit.status).toBe(503);
      expect(hit.headers.get('retry-after')).toBe('2');
      expect(hit.body).toEqual({ detail: 'Service unavailable.' });
      expect((await call('GET', '/_mock/faults')).body).toEqual({ faults: [] });
      expect((await call('GET', `/api/invoices/?account_ref_id=${DEMO.accounts.active}`)).status).toBe(200);
    });

    it('times "Infinity", pathRegex and bodyBase64 stand for Infinity, a RegExp and bytes', async () => {
      const bytes = Buffer.from('{"detail":"raw"}');
      const fault = {
        pathRegex: '^/api/account/[^/]+/status/$',
        times: 'Infinity',
        status: 500,
        bodyBase64: bytes.toString('base64'),
      };
      expect((await call('POST', '/_mock/faults', fault)).status).toBe(201);
      const [queued] = app.faults.pending();
      expect(queued?.times).toBe(Number.POSITIVE_INFINITY);
      expect(queued?.path).toBeInstanceOf(RegExp);
      for (let i = 0; i < 3; i++) {
        const r = await call('GET', `/api/account/${DEMO.accounts.active}/status/`);
        expect(r.status).toBe(500);
        expect(r.text).toBe('{"detail":"raw"}');
      }
      expect((await call('GET', '/api/products/')).status).toBe(200);
      // A RegExp's source escapes slashes: the same expression.
      const listed = { ...fault, pathRegex: new RegExp(fault.pathRegex).source };
      expect((await call('GET', '/_mock/faults')).body).toEqual({ faults: [listed] });
    });

    it('lists faults added in process in their JSON form, in field order', async () => {
      app.faults.add({
        reset: 'after',
        path: /^\/api\/usage\//,
        times: Number.POSITIVE_INFINITY,
        method: 'POST',
      });
      const r = await call('GET', '/_mock/faults');
      expect(r.text).toBe(
        '{"faults":[{"method":"POST","pathRegex":"^\\\\/api\\\\/usage\\\\/","times":"Infinity","reset":"after"}]}',
      );
    });

    it('a delay fault delays, a reset fault drops the connection', async () => {
      await call('POST', '/_mock/faults', { path: '/api/products/', delayMs: 60 });
      const started = performance.now();
      expect((await call('GET', '/api/products/')).status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(55);
      await call('POST', '/_mock/faults', { path: '/api/products/', reset: 'before' });
      await expect(call('GET', '/api/products/')).rejects.toThrow('fetch failed');
    });

    it('DELETE clears every fault (204, no body)', async () => {
      await call('POST', '/_mock/faults', { status: 500, times: 5 });
      await call('POST', '/_mock/faults', { status: 502 });
      const r = await call('DELETE', '/_mock/faults');
      expect(r.status).toBe(204);
      expect(r.text).toBe('');
      expect(app.faults.size).toBe(0);
      expect((await call('GET', '/api/products/')).status).toBe(200);
    });

    const bad: [string, unknown, Record<string, string[]>][] = [
      ['not JSON', '{status:', { non_field_errors: ['Invalid JSON.'] }],
      ['an array', '[{"status":500}]', { non_field_errors: ['Invalid data. Expected a dictionary.'] }],
      ['empty', '', { non_field_errors: ['This field is required. Give at least one fault field.'] }],
      ['an unknown field (a typo)', { stauts: 503 }, { stauts: ['Unknown field.'] }],
      [
        'wrong types',
        {
          method: 1,
          path: 2,
          times: 'often',
          probability: '1',
          status: '503',
          headers: [],
          body: 3,
          delayMs: 'x',
        },
        {
          method: ['Not a valid string.'],
          path: ['Not a valid string.'],
          times: ['A valid integer (or "Infinity") is required.'],
          probability: ['A valid number is required.'],
          status: ['A valid integer is required.'],
          headers: ['Expected a JSON object.'],
          body: ['Not a valid string.'],
          delayMs: ['A valid number is required.'],
        },
      ],
      [
        'values out of range',
        { method: 'GE T', path: 'api/', times: 0, probability: 1.5, status: 99, delayMs: -1 },
        {
          method: ['Enter an HTTP method, e.g. "GET".'],
          path: ['Must start with "/" (a prefix of the request path).'],
          times: ['Ensure this value is greater than or equal to 1.'],
          probability: ['Ensure this value is from 0 to 1.'],
          status: ['Ensure this value is from 200 to 599.'],
          delayMs: ['Ensure this value is greater than or equal to 0.'],
        },
      ],
      [
        'bad choices',
        { encoding: 'br', stall: 'head', reset: 'during' },
        {
          encoding: ['"br" is not a valid choice.'],
          stall: ['"head" is not a valid choice.'],
          reset: ['"during" is not a valid choice.'],
        },
      ],
      [
        'a bad regex, bad base64 and headers that are not header values',
        { pathRegex: '(', bodyBase64: '***', status: 500, headers: { 'bad name': 'x' } },
        {
          pathRegex: [expect.stringMatching(/^Not a valid regular expression: /) as unknown as string],
          bodyBase64: ['Enter valid base64.'],
          headers: ['Expected an object of header names to string values.'],
        },
      ],
      [
        'both forms of path and of body',
        { path: '/api/', pathRegex: 'x', status: 500, body: 'a', bodyBase64: 'YQ==' },
        {
          pathRegex: ['Give path or pathRegex, not both.'],
          bodyBase64: ['Give body or bodyBase64, not both.'],
        },
      ],
      [
        'a combination the mock refuses (stall with reset)',
        { stall: 'body', reset: 'before' },
        { non_field_errors: ['Fault.stall and Fault.reset exclude each other: a reset sends nothing'] },
      ],
      [
        'a body without a status',
        { body: 'x' },
        {
          non_field_errors: [
            'Fault.body and Fault.bodyBytes need Fault.status (the handler answers otherwise)',
          ],
        },
      ],
    ];
    it.each(bad)('a body with %s is a 400 field map and queues nothing', async (_name, body, expected) => {
      const r = await call('POST', '/_mock/faults', body, { 'content-type': 'application/json' });
      expect(r.status).toBe(400);
      expect(r.body).toEqual(expected);
      expect(app.faults.size).toBe(0);
    });
  });

  describe('request log', () => {
    it('GET lists /api/ requests with method and path filters; DELETE clears it', async () => {
      await call('GET', '/api/products/');
      await call('GET', `/api/invoices/?account_ref_id=${DEMO.accounts.active}`);
      await call('POST', '/api/usage/credits/debit/', {
        account_ref_id: DEMO.accounts.active,
        product_code: 'ai-assistant',
        meter_code: 'credits',
        quantity: 1,
        event_key: 'k1',
      });
      const all = obj((await call('GET', '/_mock/requests')).body).requests as Record<string, unknown>[];
      expect(all.map((r) => `${r.method} ${r.path}`)).toEqual([
        'GET /api/products/',
        'GET /api/invoices/',
        'POST /api/usage/credits/debit/',
      ]);
      expect(all[1]?.query).toEqual({ account_ref_id: DEMO.accounts.active });
      expect(obj(all[2]?.body).event_key).toBe('k1');
      expect(all[2]?.requestId).toMatch(/^req_[0-9a-f]{24}$/);

      const posts = obj((await call('GET', '/_mock/requests?method=post')).body).requests as unknown[];
      expect(posts).toHaveLength(1);
      const invoices = obj((await call('GET', '/_mock/requests?path=/api/invoices/')).body)
        .requests as unknown[];
      expect(invoices).toHaveLength(1);
      const none = obj((await call('GET', '/_mock/requests?method=GET&path=/api/usage/')).body).requests;
      expect(none).toEqual([]);

      expect((await call('DELETE', '/_mock/requests')).status).toBe(204);
      expect((await call('GET', '/_mock/requests')).body).toEqual({ requests: [] });
    });
  });

  describe('lifecycle: validation', () => {
    it('GET lists the events', async () => {
      expect((await call('GET', '/_mock/lifecycle')).body).toEqual({ events: [...LIFECYCLE_EVENTS] });
    });

    it('an unknown event, account or tier is a 404 { error } and changes nothing', async () => {
      const unknownEvent = await call('POST', '/_mock/lifecycle/payment-maybe', { account_ref_id: 'x' });
      expect(unknownEvent.status).toBe(404);
      expect(obj(unknownEvent.body).error).toMatch(
        /^Unknown lifecycle event "payment-maybe"; one of subscription-created/,
      );

      const unknownAccount = await call('POST', '/_mock/lifecycle/payment-failed', {
        account_ref_id: 'acct_nope',
      });
      expect(unknownAccount.status).toBe(404);
      expect(unknownAccount.body).toEqual({ error: 'Unknown account acct_nope' });

      const before = app.store.subscriptions(DEMO.accounts.active).map((s) => ({ ...s }));
      const unknownTier = await call('POST', '/_mock/lifecycle/payment-failed', {
        account_ref_id: DEMO.accounts.active,
        subscription: 'pro-plan',
        tier: 'gold',
      });
      expect(unknownTier.status).toBe(404);
      expect(unknownTier.body).toEqual({
        error: `Account ${DEMO.accounts.active} has no subscription to pro-plan/gold`,
      });
      expect(app.store.subscriptions(DEMO.accounts.active)).toEqual(before);
      expect(app.webhooks.deliveries()).toEqual([]);
    });

    it('a bad body is a 400 field map', async () => {
      const missing = await call('POST', '/_mock/lifecycle/payment-failed', {});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ account_ref_id: ['This field is required.'] });
      const wrong = await call('POST', '/_mock/lifecycle/subscription-created', {
        account_ref_id: ' ',
        tier: 3,
        plan: 'pro-plan',
      });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toEqual({
        plan: ['Unknown field.'],
        account_ref_id: ['This field may not be blank.'],
        tier: ['Not a valid string.'],
      });
      expect((await call('POST', '/_mock/lifecycle/payment-failed', 'nope')).body).toEqual({
        non_field_errors: ['Invalid JSON.'],
      });
      expect(app.webhooks.deliveries()).toEqual([]);
    });
  });

  describe('webhook receiver registration', () => {
    it('PUT registers, GET reads, DELETE unregisters', async () => {
      expect((await call('GET', '/_mock/webhooks/receiver')).body).toEqual({ url: null });
      const put = await call('PUT', '/_mock/webhooks/receiver', { url: 'http://127.0.0.1:9/hooks' });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ url: 'http://127.0.0.1:9/hooks' });
      expect((await call('GET', '/_mock/webhooks/receiver')).body).toEqual({
        url: 'http://127.0.0.1:9/hooks',
      });
      const del = await call('DELETE', '/_mock/webhooks/receiver');
      expect(del.status).toBe(204);
      expect((await call('GET', '/_mock/webhooks/receiver')).body).toEqual({ url: null });
    });

    it('a bad URL or body is a 400 field map and keeps the registration', async () => {
      await call('PUT', '/_mock/webhooks/receiver', { url: 'http://127.0.0.1:9/keep' });
      const cases: [unknown, Record<string, string[]>][] = [
        [{}, { url: ['This field is required.'] }],
        [{ url: 'ftp://x/y' }, { url: ['Webhook URL must be http or https, got "ftp://x/y"'] }],
        [{ url: '/relative' }, { url: ['Webhook URL must be absolute, got "/relative"'] }],
        [{ url: 5 }, { url: ['Not a valid string.'] }],
        [{ url: 'http://a/', extra: 1 }, { extra: ['Unknown field.'] }],
      ];
      for (const [body, expected] of cases) {
        const r = await call('PUT', '/_mock/webhooks/receiver', body);
        expect(r.status).toBe(400);
        expect(r.body).toEqual(expected);
      }
      expect((await call('GET', '/_mock/webhooks/receiver')).body).toEqual({
        url: 'http://127.0.0.1:9/keep',
      });
    });

    it('redelivering an unknown transaction_id is a 404 { error }', async () => {
      const r = await call('POST', '/_mock/webhooks/deliveries/tx_nope/redeliver');
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'No webhook with transaction_id tx_nope has been sent' });
    });
  });

  it('POST /_mock/reset restores the seed, clears faults and the log, and re-registers the start-up receiver', async () => {
    const configured = createMockApp({ webhookUrl: 'http://127.0.0.1:9/start' });
    const c = caller(configured.fetch, ORIGIN, configured.apiKey);
    await c('POST', '/api/usage/credits/debit/', {
      account_ref_id: DEMO.accounts.active,
      product_code: 'ai-assistant',
      meter_code: 'credits',
      quantity: 400,
      event_key: 'reset-1',
    });
    expect(configured.store.balance(DEMO.accounts.active, 'ai-assistant', 'credits')).toBe(
      DEMO.initialCredits - 400,
    );
    await c('POST', '/_mock/faults', { status: 500, path: '/api/nothing/' });
    await c('PUT', '/_mock/webhooks/receiver', { url: 'http://127.0.0.1:9/other' });

    const r = await c('POST', '/_mock/reset');
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(configured.store.balance(DEMO.accounts.active, 'ai-assistant', 'credits')).toBe(
      DEMO.initialCredits,
    );
    expect((await c('GET', '/_mock/faults')).body).toEqual({ faults: [] });
    expect((await c('GET', '/_mock/requests')).body).toEqual({ requests: [] });
    expect((await c('GET', '/_mock/webhooks/receiver')).body).toEqual({ url: 'http://127.0.0.1:9/start' });
  });

  it('a CORS preflight allows the control verbs', async () => {
    const cors = createMockApp({ cors: true });
    const r = await cors.fetch(`${ORIGIN}/_mock/faults`, { method: 'OPTIONS' });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-methods')).toMatch(/PUT.*DELETE/);
  });
});

describe('control surface over HTTP (startMockServer): lifecycle webhooks reach the receiver', () => {
  let server: MockServer;
  let call: ReturnType<typeof caller>;
  const rx = useReceiver();
  beforeAll(async () => {
    server = await startMockServer({ webhookRetry: { delayMs: 5 } });
    call = caller(fetch, new URL(server.baseUrl).origin, server.apiKey);
  });
  afterAll(() => server.close());
  beforeEach(async () => {
    expect((await call('POST', '/_mock/reset')).status).toBe(204);
    expect((await call('PUT', '/_mock/webhooks/receiver', { url: rx.receiver.url })).status).toBe(200);
  });

  const params: Record<(typeof LIFECYCLE_EVENTS)[number], Record<string, string>> = {
    'subscription-created': { account_ref_id: 'acct_new', subscription: 'team-plan', tier: 'basic' },
    'payment-succeeded': { account_ref_id: DEMO.accounts.pastDue },
    'payment-failed': { account_ref_id: DEMO.accounts.active },
    'subscription-cancelled': { account_ref_id: DEMO.accounts.active },
    'subscription-cancel-at-period-end': { account_ref_id: DEMO.accounts.active },
    'subscription-incomplete': { account_ref_id: DEMO.accounts.active },
  };
  const activeAfter: Record<(typeof LIFECYCLE_EVENTS)[number], boolean> = {
    'subscription-created': true,
    'payment-succeeded': true,
    'payment-failed': false,
    'subscription-cancelled': false,
    'subscription-cancel-at-period-end': true,
    'subscription-incomplete': false,
  };

  it.each(LIFECYCLE_EVENTS.map((e) => [e]))(
    '%s: state changed, webhook delivered, delivery answered',
    async (event) => {
      const r = await call('POST', `/_mock/lifecycle/${event}`, params[event]);
      expect(r.status).toBe(200);
      const delivery = obj(obj(r.body).delivery);
      expect(delivery.delivered).toBe(true);
      expect(delivery.url).toBe(rx.receiver.url);
      const payload = obj(delivery.event);
      expect(payload.event).toBe(event);
      expect(payload.account_ref_id).toBe(params[event].account_ref_id);
      expect(payload.is_active).toBe(activeAfter[event]);

      expect(rx.receiver.received).toHaveLength(1);
      expect(rx.receiver.received[0]?.body).toEqual(payload);

      // The API shows the new state.
      const status = await call('GET', `/api/account/${params[event].account_ref_id}/status/`);
      expect(status.status).toBe(200);
      const deliveries = obj((await call('GET', '/_mock/webhooks/deliveries')).body).deliveries as unknown[];
      expect(deliveries).toEqual([delivery]);
    },
  );

  it('redeliver posts the same body again; without a receiver the delivery is logged undelivered', async () => {
    const first = obj(
      obj((await call('POST', '/_mock/lifecycle/payment-failed', params['payment-failed'])).body).delivery,
    );
    const id = String(obj(first.event).transaction_id);
    const again = await call('POST', `/_mock/webhooks/deliveries/${encodeURIComponent(id)}/redeliver`);
    expect(again.status).toBe(200);
    expect(obj(obj(again.body).delivery).delivered).toBe(true);
    expect(rx.receiver.received.map((x) => x.text)).toEqual([
      rx.receiver.received[0]?.text,
      rx.receiver.received[0]?.text,
    ]);
    expect(rx.receiver.received).toHaveLength(2);

    expect((await call('DELETE', '/_mock/webhooks/receiver')).status).toBe(204);
    const silent = obj(
      obj((await call('POST', '/_mock/lifecycle/payment-succeeded', params['payment-failed'])).body).delivery,
    );
    expect(silent).toMatchObject({ url: '', delivered: false, attempts: [] });
    expect(rx.receiver.received).toHaveLength(2);
  });

  it('a receiver that refuses shows as attempts in the answer', async () => {
    rx.receiver.script({ status: 500, body: 'no' }, { status: 500, body: 'no' }, { status: 500, body: 'no' });
    const slow = await startMockServer({
      webhookRetry: { attempts: 2, delayMs: 1 },
      webhookUrl: rx.receiver.url,
    });
    try {
      const c = caller(fetch, new URL(slow.baseUrl).origin, slow.apiKey);
      const r = await c('POST', '/_mock/lifecycle/payment-failed', params['payment-failed']);
      const delivery = obj(obj(r.body).delivery);
      expect(delivery.delivered).toBe(false);
      expect(delivery.attempts).toEqual([
        { status: 500, ok: false, error: 'expected status 200, got 500' },
        { status: 500, ok: false, error: 'expected status 200, got 500' },
      ]);
    } finally {
      await slow.close();
    }
  });
});

describe('startMockServer host option', () => {
  it('listens on 0.0.0.0 and names loopback in its URLs', async () => {
    const server = await startMockServer({ host: '0.0.0.0' });
    try {
      expect(server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/$/);
      const r = await fetch(new URL('products/', server.baseUrl), {
        headers: { authorization: `Bearer ${server.apiKey}` },
      });
      expect(r.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('defaults to 127.0.0.1, and a name is kept in the URLs', async () => {
    const byDefault = await startMockServer();
    const named = await startMockServer({ host: 'localhost' });
    try {
      expect(byDefault.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/$/);
      expect(named.baseUrl).toMatch(/^http:\/\/localhost:\d+\/api\/$/);
      expect(named.appUrl).toBe(new URL(named.baseUrl).origin);
    } finally {
      await Promise.all([byDefault.close(), named.close()]);
    }
  });

  it('rejects with EADDRINUSE when the port is taken', async () => {
    const first = await startMockServer();
    try {
      const port = Number(new URL(first.baseUrl).port);
      await expect(startMockServer({ port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await first.close();
    }
  });

  it('options.webhookUrl shows as the registered receiver', async () => {
    const own = await startReceiver();
    try {
      const server = await startMockServer({ webhookUrl: own.url });
      try {
        const c = caller(fetch, new URL(server.baseUrl).origin, server.apiKey);
        expect((await c('GET', '/_mock/webhooks/receiver')).body).toEqual({ url: own.url });
      } finally {
        await server.close();
      }
    } finally {
      await own.close();
    }
  });
});
