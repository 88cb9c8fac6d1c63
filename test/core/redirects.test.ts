import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APIError, BillingClient } from '../../src/index.js';
import { caught, instantClock, type LoopbackServer, serveNode, withClock } from '../helpers.js';

// Two loopback origins: the configured API, which answers with redirects, and "elsewhere", which
// records anything that reaches it. A redirect must never carry a request (or the key) there.
let elsewhere: LoopbackServer;
let api: LoopbackServer;
const reached: { method: string; headers: Record<string, unknown> }[] = [];
let redirectStatus = 302;

beforeAll(async () => {
  elsewhere = await serveNode((req, res) => {
    reached.push({ method: req.method ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ approved: true, debited: 5, remaining_balance: 1_000_000 }));
  });
  api = await serveNode((_req, res) => {
    res.writeHead(redirectStatus, { location: `${elsewhere.url}/steal`, 'x-request-id': 'req_redirect' });
    res.end();
  });
});
afterAll(async () => {
  await api.close();
  await elsewhere.close();
});

const debit = (authHeader: 'authorization' | 'x-api-key') =>
  new BillingClient(
    withClock(
      { apiKey: 'sk_secret_key', baseUrl: `${api.url}/api/`, authHeader, logLevel: 'off' },
      instantClock(),
    ),
  ).usage.debit({
    account_ref_id: 'acct_1',
    product_code: 'ai-assistant',
    meter_code: 'credits',
    quantity: 5,
  });

describe('redirects are never followed', () => {
  it.each([301, 302, 303, 307, 308])(
    '%i on a debit: a typed APIError naming the Location; nothing reaches it',
    async (code) => {
      redirectStatus = code;
      reached.length = 0;
      for (const authHeader of ['authorization', 'x-api-key'] as const) {
        const err = (await caught(() => debit(authHeader))) as APIError;
        expect(err).toBeInstanceOf(APIError);
        expect(err.name).toBe('APIError');
        expect(err.status).toBe(code);
        expect(err.message).toContain(`redirecting to ${elsewhere.url}/steal`);
        expect(err.headers.location).toBe(`${elsewhere.url}/steal`);
        expect(err.requestId).toBe('req_redirect');
        expect(err.event_key).toMatch(/^[0-9a-f-]{36}$/);
      }
      expect(reached).toEqual([]);
    },
  );
});
