import { describe, expect, it } from 'vitest';
import { useMockServer } from '../helpers.js';
import {
  A,
  AI,
  ask,
  credits,
  DEBIT_PATH,
  EMPTY,
  EXPORT,
  echoed,
  expectProblem,
  FRAMEWORKS,
  PAST_DUE,
  PRO,
  SSO,
  servers,
} from './helpers.js';

// Credits through each adapter: debited once per client request, and only once every other part held.
const mock = useMockServer();
const balance = () => mock.server.store.balance(A, AI, 'credits');
const debits = () => mock.server.requests.count({ method: 'POST', path: DEBIT_PATH });

describe.each(FRAMEWORKS)('credits through $name', (framework) => {
  const start = servers(framework, mock);

  it('the same Idempotency-Key twice debits once and runs once: the reuse is refused 422', async () => {
    const s = await start({ need: credits(10) });
    const key = `retry-${framework.name}`;
    const first = await ask(s, { account: A, idempotencyKey: key });
    const reuse = await ask(s, { account: A, idempotencyKey: key });
    expect(first.status).toBe(200);
    expectProblem(reuse, 422, 'idempotency_key_used');
    expect(s.handled).toBe(1);
    expect(balance()).toBe(990);
    expect(debits()).toBe(1);
    // The ledger's key is derived from the account, the route and the header, never the header itself.
    const [eventKey] = [...mock.server.store.ledger.keys()];
    expect(mock.server.store.ledger.size).toBe(1);
    expect(eventKey).toMatch(/^gate_[\w-]{43}$/);
    expect(mock.server.store.ledger.get(eventKey as string)).toMatchObject({
      account_ref_id: A,
      quantity: 10,
    });
    if (framework.seesDecision) {
      const debit = { approved: true, debited: 10, remaining_balance: 990, event_key: eventKey };
      expect(echoed(first)).toMatchObject({ allowed: true, account_ref_id: A, debit, idempotency: { key } });
    }
  });

  it('without the key each request debits, each under a key of its own', async () => {
    const s = await start({ need: credits(10) });
    const first = await ask(s, { account: A });
    const second = await ask(s, { account: A });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(balance()).toBe(980);
    expect(mock.server.store.ledger.size).toBe(2);
    expect(debits()).toBe(2);
    if (framework.seesDecision) {
      const keys = [echoed(first)?.debit?.event_key, echoed(second)?.debit?.event_key];
      expect(new Set(keys).size).toBe(2);
      expect(new Set(mock.server.store.ledger.keys())).toEqual(new Set(keys));
    }
  });

  it.each([
    ['inactive', PAST_DUE, [PRO, credits(10)], 'inactive'],
    ['credits listed first, subscription failing', PAST_DUE, [credits(10), PRO], 'inactive'],
    ['not entitled', EMPTY, [credits(10), EXPORT], 'not_entitled'],
    ['entitled to one, not the other', A, [EXPORT, credits(10), SSO], 'not_entitled'],
  ] as const)('a need array that fails early (%s) debits nothing', async (_name, account, need, reason) => {
    const s = await start({ need });
    const answer = await ask(s, { account });
    expect(answer.status).toBe(402);
    expect(answer.body).toMatchObject({ reason });
    expect(debits()).toBe(0);
    expect(mock.server.store.ledger.size).toBe(0);
    expect(balance()).toBe(1000);
    expect(s.handled).toBe(0);
  });

  it('an array that holds debits once, after the rest held', async () => {
    const s = await start({ need: [credits(10), PRO, EXPORT] });
    const answer = await ask(s, { account: A });
    expect(answer.status).toBe(200);
    expect(balance()).toBe(990);
    expect(debits()).toBe(1);
    // Credits last: the debit was sent after both access answers.
    const log = mock.server.requests.all().map((r) => r.path);
    const debitAt = log.indexOf(DEBIT_PATH);
    expect(log.findIndex((p) => p.startsWith('/api/account/'))).toBeLessThan(debitAt);
    expect(log.findIndex((p) => p.startsWith('/api/entitlements/'))).toBeLessThan(debitAt);
  });
});
