import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InternalServerError, isMultipleStatus } from '../../src/index.js';
import { clientFor, useMockServer } from '../helpers.js';
import { cacheWithClock, manualClock, tick } from './helpers.js';

const mock = useMockServer();
const ACCOUNT = 'acct_active';
const TTL = 1_000;
const DENY_TTL = 500;
const STALE = 3_000;

/** One step of a run: what the app, the service and the clock do. */
type Step =
  | { kind: 'lookup'; callers: number }
  | { kind: 'advance'; ms: number }
  /** The account changes with no webhook: only the ttl bounds how long the cache says otherwise. */
  | { kind: 'change' }
  /** The account changes and a webhook invalidates it. */
  | { kind: 'change+invalidate' }
  /** The service fails the next `times` requests with 503. */
  | { kind: 'fail'; times: number }
  | { kind: 'recover' };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('lookup' as const), callers: fc.integer({ min: 1, max: 4 }) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.integer({ min: 0, max: 2 * STALE }),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'change' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'change+invalidate' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('fail' as const), times: fc.integer({ min: 1, max: 3 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'recover' as const }) },
);

/** Waits until no request is being answered and the client has had time to store what came back. */
async function settle(): Promise<void> {
  for (let quiet = 0; quiet < 2; ) {
    await tick(5);
    quiet = mock.server.activeRequests() === 0 ? quiet + 1 : 0;
  }
}

describe('createAccessCache against a model', () => {
  it('property: never an answer older than staleMs, never one from before a resolved invalidate', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        mock.server.reset();
        const clock = manualClock();
        const access = cacheWithClock(
          clientFor(mock.server, { maxRetries: 0 }),
          { ttlMs: TTL, denyTtlMs: DENY_TTL, staleMs: STALE },
          clock,
        );
        const account = mock.server.store.account(ACCOUNT);
        if (!account) throw new Error('seed changed');
        // The model: each version of the account's state, the (virtual) time it replaced the one
        // before, and the oldest version a lookup may return after the last invalidate resolved.
        const setAt: number[] = [];
        let version = 0;
        let floor = 0;
        const change = () => {
          version += 1;
          setAt[version] = clock.now();
          account.customer_email = `v${version}@example.com`;
        };
        change();
        let failing = false;
        for (const s of steps) {
          switch (s.kind) {
            case 'advance':
              clock.advance(s.ms);
              break;
            case 'change':
              change();
              break;
            case 'change+invalidate':
              change();
              await access.invalidate(ACCOUNT);
              floor = version;
              break;
            case 'fail':
              failing = true;
              mock.server.faults.add({ path: '/api/account/', status: 503, times: s.times });
              break;
            case 'recover':
              failing = false;
              mock.server.faults.clear();
              break;
            case 'lookup': {
              const now = clock.now();
              const results = await Promise.allSettled(
                Array.from({ length: s.callers }, () => access.status({ account_ref_id: ACCOUNT })),
              );
              for (const r of results) {
                if (r.status === 'rejected') {
                  // Only the service's own failure, only while it fails, and never a cached one.
                  expect(r.reason).toBeInstanceOf(InternalServerError);
                  expect(failing).toBe(true);
                  continue;
                }
                if (isMultipleStatus(r.value)) throw new Error('unexpected form');
                const v = Number(/^v(\d+)@/.exec(r.value.customer_email)?.[1]);
                expect(v).toBeGreaterThanOrEqual(floor);
                // The answer's version was current at some moment younger than staleMs.
                const replacedAt = setAt[v + 1] ?? Number.POSITIVE_INFINITY;
                expect(replacedAt).toBeGreaterThan(now - STALE);
              }
              await settle();
              break;
            }
          }
          if (failing && mock.server.faults.size === 0) failing = false;
        }
        await access.close();
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
