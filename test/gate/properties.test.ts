import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type BillingClient,
  createAccessCache,
  createCreditHolds,
  createGate,
  createUsageTracker,
  type GateDenialReason,
  memorySpool,
  type UsageTracker,
} from '../../src/index.js';
import { clientFor, useMockServer } from '../helpers.js';
import {
  A,
  AI,
  credits,
  DEBIT_PATH,
  EMPTY,
  EXPORT,
  type Need,
  PAST_DUE,
  PRO,
  SSO,
  USAGE,
} from './helpers.js';

// gate.check with Fetch Requests against a small model of the seed: which part holds for which
// account, and what a debit does to acct_active's 1000 credits.
const mock = useMockServer();
let shared: { billing: BillingClient; tracker: UsageTracker } | undefined;
afterAll(() => shared?.tracker.close());

const BALANCE = 1000;

/** A part other than credits, and whether it holds for each account. */
interface Part {
  need: Need;
  holds: (account: string) => boolean;
  /** Why it fails when it does. */
  reason: GateDenialReason;
  /** Answered by accounts.status (a fault there makes it unavailable). */
  status: boolean;
}

const PARTS: Part[] = [
  { need: PRO, holds: (a) => a === A, reason: 'inactive', status: true },
  { need: EXPORT, holds: (a) => a === A, reason: 'not_entitled', status: false },
  { need: SSO, holds: () => false, reason: 'not_entitled', status: false },
  { need: USAGE, holds: () => true, reason: 'not_entitled', status: false },
];

const scenario = fc.record({
  account: fc.constantFrom<string | undefined>(A, A, A, PAST_DUE, EMPTY, undefined),
  parts: fc.array(fc.constantFrom(...PARTS), { maxLength: 3 }),
  /** Small, around the balance (999, 1000, 1001: the edge), or anything up to past it. */
  credits: fc.option(
    fc.oneof(
      fc.integer({ min: 1, max: 20 }),
      fc.constantFrom(999, 1_000, 1_001),
      fc.integer({ min: 1, max: 1_200 }),
    ),
    { nil: undefined },
  ),
  creditsAt: fc.nat(),
  /** accounts.status answers 503 (billing down for the subscription part). */
  statusDown: fc.boolean(),
  idempotencyKey: fc.option(fc.uuid(), { nil: undefined }),
  browser: fc.boolean(),
});

describe('gate.check against a model', () => {
  it('property: never allowed when any part fails; never a debit when a non-credit part fails', async () => {
    await fc.assert(
      fc.asyncProperty(
        scenario.filter((s) => s.parts.length > 0 || s.credits !== undefined),
        async (s) => {
          mock.server.reset();
          if (s.statusDown) {
            mock.server.faults.add({ path: '/api/account/', status: 503, times: Number.POSITIVE_INFINITY });
          }
          if (!shared) {
            const client = clientFor(mock.server, { maxRetries: 0 });
            shared = { billing: client, tracker: createUsageTracker(client, { spool: memorySpool() }) };
          }
          const { billing, tracker } = shared;
          const gate = createGate({
            billing,
            access: createAccessCache(billing),
            account: (request: Request) => request.headers.get('x-account') ?? undefined,
            tracker,
          });
          const needs: Need[] = s.parts.map((p) => p.need);
          if (s.credits !== undefined) needs.splice(s.creditsAt % (needs.length + 1), 0, credits(s.credits));
          const headers = new Headers({ accept: s.browser ? 'text/html' : 'application/json' });
          if (s.account !== undefined) headers.set('x-account', s.account);
          if (s.idempotencyKey !== undefined) headers.set('idempotency-key', s.idempotencyKey);
          const request = new Request('http://app.test/r', { method: 'POST', headers });

          const decision = await gate.check(request, needs);

          // The model.
          const failing = s.parts.filter((p) => (s.account === undefined ? true : !p.holds(s.account)));
          const down = s.statusDown && s.parts.some((p) => p.status);
          const othersHold = s.account !== undefined && failing.length === 0 && !down;
          const creditsHold = s.credits === undefined || (s.account === A && s.credits <= BALANCE);
          const debitsSent = mock.server.requests.count({ method: 'POST', path: DEBIT_PATH });
          const balance = mock.server.store.balance(A, AI, 'credits');

          if (!othersHold) {
            expect(decision.allowed).toBe(false);
            expect(debitsSent).toBe(0);
            expect(mock.server.store.ledger.size).toBe(0);
            expect(balance).toBe(BALANCE);
            if (!decision.allowed) {
              const expected: GateDenialReason[] =
                s.account === undefined
                  ? ['unauthenticated']
                  : [...failing.map((p) => p.reason), ...(down ? (['unavailable'] as const) : [])];
              expect(expected).toContain(decision.reason);
            }
            return;
          }
          expect(debitsSent).toBe(s.credits === undefined ? 0 : 1);
          if (!creditsHold) {
            expect(decision).toMatchObject({ allowed: false, reason: 'insufficient_credits', status: 402 });
            expect(balance).toBe(BALANCE);
            return;
          }
          expect(decision).toMatchObject({ allowed: true, account_ref_id: s.account });
          if (s.credits === undefined) {
            expect(decision.allowed && decision.debit).toBeUndefined();
            expect(balance).toBe(BALANCE);
          } else {
            expect(balance).toBe(BALANCE - s.credits);
            expect(decision.allowed && decision.debit).toMatchObject({
              approved: true,
              debited: s.credits,
              remaining_balance: BALANCE - s.credits,
            });
            // With a key, the debit's event_key is derived from it (with the account and the route),
            // never the client's own string: a key reaches no other account's ledger.
            if (s.idempotencyKey !== undefined && decision.allowed) {
              expect(decision.debit?.event_key).toMatch(/^gate_[\w-]{43}$/);
              expect(decision.idempotency?.key).toBe(s.idempotencyKey);
              await decision.idempotency?.done();
            }
          }
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('several credits needs of one route', () => {
  const quantities = fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 2, maxLength: 4 });

  it('property: on a gate with holds, all are charged or none (a "no" leaves the balance as it was)', async () => {
    await fc.assert(
      fc.asyncProperty(quantities, fc.integer({ min: 0, max: 100 }), async (qs, balance) => {
        mock.server.reset();
        mock.server.store.setBalance(A, AI, 'credits', balance);
        const billing = clientFor(mock.server, { maxRetries: 0 });
        const holds = createCreditHolds(billing);
        const gate = createGate({ billing, access: createAccessCache(billing), account: () => A, holds });
        const decision = await gate.check(
          new Request('http://app.test/r', { method: 'POST' }),
          qs.map(credits),
        );
        const total = qs.reduce((a, b) => a + b, 0);
        expect(decision.allowed).toBe(total <= balance);
        expect(mock.server.store.balance(A, AI, 'credits')).toBe(
          total <= balance ? balance - total : balance,
        );
        expect(holds.stats().open).toBe(0);
      }),
      { numRuns: 30 },
    );
  });

  it('property: without holds, such a route is refused when it is made', () => {
    const billing = clientFor(mock.server, { maxRetries: 0 });
    const gate = createGate({ billing, access: createAccessCache(billing), account: () => A });
    fc.assert(
      fc.property(
        quantities,
        fc.array(fc.constantFrom(PRO, EXPORT, USAGE), { maxLength: 2 }),
        (qs, others) => {
          const needs = [...others.filter((n) => n !== USAGE), ...qs.map(credits)];
          expect(() => gate.hono(needs)).toThrow(/several credits needs/);
        },
      ),
      { numRuns: 50 },
    );
  });
});
