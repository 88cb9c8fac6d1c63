// The tracker under hostile answers and misuse (issue 47 §2): a transaction option that is none, an
// append whose outcome is unknown, a long Retry-After, a wall clock that jumps.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createUsageTracker,
  InvalidRequestError,
  memorySpool,
  type Spool,
  type UsageTracker,
  type UsageTrackerOptions,
} from '../../src/index.js';
import { hasTestClock } from '../../src/util/clock.js';
import { caught, clientFor, instantClock, useMockServer } from '../helpers.js';
import { METER, spySpool, withTrackerClock } from './support.js';

const mock = useMockServer();

const open: UsageTracker[] = [];
afterEach(async () => {
  for (const tracker of open.splice(0)) await tracker.close({ timeoutMs: 0 }).catch(() => {});
});

function tracker(options: UsageTrackerOptions = {}, billing = clientFor(mock.server, { maxRetries: 0 })) {
  const timed = hasTestClock(options) ? options : withTrackerClock(options, instantClock());
  const made = createUsageTracker(billing, timed);
  open.push(made);
  return made;
}

/** A memory spool that also writes "through a transaction": one with a `query` method, as a driver's client has. */
function transactionalSpool(): Spool & { calls: { append: number; appendIn: number } } {
  const spool = spySpool();
  return Object.assign(spool, {
    appendIn: async (transaction: unknown, events: Parameters<Spool['append']>[0]) => {
      if (typeof (transaction as { query?: unknown } | null)?.query !== 'function') {
        throw new InvalidRequestError('fakeSpool.appendIn', [
          { field: 'transaction', message: 'must be a client inside BEGIN' },
        ]);
      }
      (spool.calls as unknown as { appendIn: number }).appendIn++;
      return events.map((_, i) => `tx-${i}`);
    },
    calls: Object.assign(spool.calls, { appendIn: 0 }),
  });
}

describe('track(event, { transaction }): present but no transaction is refused, before anything is stored', () => {
  it.each([
    ['null', null],
    ['{}', {}],
    ['0', 0],
    ['false', false],
    ['a string', 'tx'],
  ])(
    '%s: InvalidRequestError naming options.transaction, on a spool with or without appendIn',
    async (_, bad) => {
      for (const spool of [spySpool(), transactionalSpool()]) {
        const made = tracker({ spool });
        const error = await caught(() => made.track({ ...METER, quantity: 1 }, { transaction: bad }));
        expect(error).toBeInstanceOf(InvalidRequestError);
        expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual(['options.transaction']);
        expect(spool.calls.append).toBe(0);
        expect(made.stats().queued).toBe(0);
      }
    },
  );

  it('a real transaction still writes through it; no option at all writes outside', async () => {
    const spool = transactionalSpool();
    const made = tracker({ spool });
    await made.track({ ...METER, quantity: 1 }, { transaction: { query: async () => ({ rows: [] }) } });
    expect(spool.calls.appendIn).toBe(1);
    await made.track({ ...METER, quantity: 1 });
    await made.track({ ...METER, quantity: 1 }, { transaction: undefined });
    expect(spool.calls.append).toBe(2);
    expect(spool.calls.appendIn).toBe(1);
  });

  it('property: any value given as transaction that the spool cannot write through is refused naming options.transaction, nothing stored', async () => {
    const spool = transactionalSpool();
    const made = tracker({ spool });
    await fc.assert(
      fc.asyncProperty(
        fc.anything({ withNullPrototype: true, withBoxedValues: true, withMap: true, withBigInt: true }),
        async (bad) => {
          fc.pre(bad !== undefined);
          const error = await caught(() => made.track({ ...METER, quantity: 1 }, { transaction: bad }));
          expect(error).toBeInstanceOf(InvalidRequestError);
          expect((error as InvalidRequestError).issues.map((i) => i.field)).toContain('options.transaction');
          expect(spool.calls.append).toBe(0);
        },
      ),
      { numRuns: 100 },
    );
  });
});

void memorySpool;
