import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lookupOptionRules, lookupOptionsOf } from '../../src/access/lookup-options.js';
import { InvalidRequestError } from '../../src/index.js';
import { check } from '../../src/internal/checks.js';

/** What a way of checking answered: the options it read, or the issues it refused them with. */
function outcomeOf(read: () => { signal?: unknown; outcome?: unknown }) {
  try {
    const { signal, outcome } = read();
    return { signal, outcome };
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    return { issues: (error as InvalidRequestError).issues };
  }
}

class Options {
  outcome = {};
}

/** Values an options field may hold: right, absent, empty, or of the wrong kind. */
const value = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(''),
  fc.constant(0),
  fc.string({ maxLength: 3 }),
  fc.constant(new AbortController().signal),
  fc.constant(AbortSignal.abort()),
  fc.constant({}),
  fc.constant({ source: 'cache' }),
  fc.constant(Object.create(null)),
  fc.constant([]),
  fc.constant(new Date(0)),
  fc.constant(new Options()),
);

/** An options argument: a plain object of some of these fields, or not a plain object at all. */
const options = fc.oneof(
  { weight: 5, arbitrary: fc.dictionary(fc.constantFrom('signal', 'outcome', 'timeout', 'x'), value) },
  { weight: 1, arbitrary: value },
);

describe("a lookup's per-call options", () => {
  it('are read by name exactly as check reads them: the same signal and outcome, or the same refusal', () => {
    fc.assert(
      fc.property(options, (given) => {
        const fast = outcomeOf(() => lookupOptionsOf('access.isActive', given as never));
        // `undefined` means the defaults on both ways (check is never asked for it).
        const slow =
          given === undefined
            ? { signal: undefined, outcome: undefined }
            : outcomeOf(() => check('access.isActive', given, lookupOptionRules, undefined, 'options.'));
        expect(fast).toStrictEqual(slow);
      }),
      { numRuns: 2_000 },
    );
  });

  it("read the gate's { outcome } as given, and refuse an object of another prototype as check does", () => {
    const outcome = {};
    expect(lookupOptionsOf('access.isActive', { outcome }).outcome).toBe(outcome);
    const inherited = Object.create({ timeout: 1 }) as { outcome?: object };
    expect(Object.getPrototypeOf(inherited)).not.toBe(Object.prototype);
    // Not a plain object (its prototype is another object): refused as check refuses it.
    expect(() => lookupOptionsOf('access.isActive', inherited)).toThrow(/options must be a plain object/);
  });

  it('read each field once: a getter that answers differently the second time changes nothing', () => {
    let reads = 0;
    const signal = {
      get aborted() {
        if (++reads > 1) throw new TypeError('read twice');
        return false;
      },
      addEventListener() {},
      removeEventListener() {},
    };
    expect(() => lookupOptionsOf('access.isActive', { signal, outcome: 5 } as never)).toThrow(
      /options\.outcome must be a plain object/,
    );
  });
});
