import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseRetryAfter } from '../../src/util/retry-after.js';

const now = Date.parse('2026-01-01T00:00:00Z');
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');
const hms = (d: Date) => `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
/** The three forms of RFC 9110's HTTP-date for one moment. */
const imf = (d: Date) =>
  `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${hms(d)} GMT`;
const rfc850 = (d: Date) =>
  `${LONG_DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${two(d.getUTCFullYear() % 100)} ${hms(d)} GMT`;
const asctime = (d: Date) =>
  `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${hms(d)} ${d.getUTCFullYear()}`;
/** Whole seconds between 1990 and 2070: an rfc850 two-digit year is read within 50 years of now. */
const moment = fc
  .integer({ min: Date.parse('1990-01-01T00:00:00Z') / 1000, max: Date.parse('2070-01-01T00:00:00Z') / 1000 })
  .map((s) => new Date(s * 1000));
const retryAfter = (value: string) => parseRetryAfter({ 'retry-after': value }, now);

describe('Retry-After, strictly as RFC 9110 has it', () => {
  it('delta-seconds: any run of digits is that many seconds', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10 ** 9 }), (n) => {
        expect(retryAfter(String(n))).toBe(n * 1000);
        expect(retryAfter(` ${n} `)).toBe(n * 1000);
      }),
    );
  });

  it('an HTTP-date in any of its three forms is the time until it (0 when past)', () => {
    fc.assert(
      fc.property(moment, fc.constantFrom(imf, rfc850, asctime), (at, form) => {
        expect(parseHttpDate(form(at), now)).toBe(at.getTime());
        expect(retryAfter(form(at))).toBe(Math.max(0, at.getTime() - now));
      }),
    );
  });

  it('anything outside the grammar is "not given", never a date long past', () => {
    for (const value of ['2, 2', '-2', '2.', '10 20', '0.5', '+3', '1e3', '0x10', 'soon', 'Infinity']) {
      expect(retryAfter(value), value).toBeUndefined();
    }
    // A date that does not exist, or one Date.parse reads loosely.
    for (const value of [
      'Thu, 31 Apr 2026 00:00:00 GMT',
      'Sun, 29 Feb 2026 00:00:00 GMT',
      'Thu, 01 Jan 2026 24:00:00 GMT',
      'Thu, 01 Jan 2026 00:00:00 UTC',
      'Thu, 1 Jan 2026 00:00:00 GMT',
      '2026-01-01T00:00:10Z',
      'January 1, 2026',
    ]) {
      expect(retryAfter(value), value).toBeUndefined();
    }
  });

  it('a value that is neither digits nor a date is never read as one (property)', () => {
    const number = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ noNaN: true }));
    const mangled = fc.oneof(
      // Two delays, a list, a sign, a fraction: what Date.parse reads as a year.
      fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => `${a}, ${b}`),
      fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => `${a} ${b}`),
      fc.nat().map((n) => `-${n + 1}`),
      fc.nat().map((n) => `${n}.`),
      number.filter((n) => !Number.isInteger(n) || n < 0).map(String),
      fc.string().filter((s) => !/^\s*\d+\s*$/.test(s) && !/GMT|\d{4}$/.test(s)),
    );
    fc.assert(
      fc.property(mangled, (value) => {
        expect(retryAfter(value)).toBeUndefined();
      }),
    );
  });

  it('retry-after-ms wins when it is a number of ms; when it is not, Retry-After is read', () => {
    expect(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' }, now)).toBe(250);
    expect(parseRetryAfter({ 'retry-after-ms': '2, 2', 'retry-after': '9' }, now)).toBe(9000);
    expect(parseRetryAfter({ 'retry-after-ms': '-1' }, now)).toBeUndefined();
  });
});
