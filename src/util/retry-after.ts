/**
 * How long the server asked us to wait, in ms, or `undefined` when it did not say.
 * Reads `retry-after-ms` (milliseconds, digits with an optional fraction), else `retry-after` as
 * RFC 9110 has it: delta-seconds (digits only) or an HTTP-date. Anything outside that grammar
 * ("2, 2", "-2", "2.", "10 20", a date that does not exist) means "not given", so the default
 * backoff applies: `Date.parse` would read such text as some date long past, and the retry would go
 * at once, hammering a service that asked to be left alone.
 */
export function parseRetryAfter(
  headers: Record<string, string>,
  now: number = Date.now(),
): number | undefined {
  const ms = headers['retry-after-ms']?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return finite(Number(ms));
  const raw = headers['retry-after']?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return finite(Number(raw) * 1000);
  const date = parseHttpDate(raw, now);
  return date === undefined ? undefined : Math.max(0, date - now);
}

/** A number of ms that a timer and arithmetic can hold: a thousand-digit delay is the longest there is. */
function finite(ms: number): number {
  return Math.min(ms, Number.MAX_SAFE_INTEGER);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = '(Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`: what senders must send. */
const IMF = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** rfc850-date, `Sunday, 06-Nov-94 08:49:37 GMT`: obsolete, still to be read. */
const RFC850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
/** asctime-date, `Sun Nov  6 08:49:37 1994`: obsolete, still to be read. */
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

/**
 * An HTTP-date (RFC 9110 §5.6.7) as ms since the epoch, or `undefined` when `text` is none: a
 * day or time that does not exist (31 April, 25:00) is none either.
 */
export function parseHttpDate(text: string, now: number = Date.now()): number | undefined {
  const parts = dateParts(text, now);
  if (!parts) return undefined;
  const [year, monthName, dayText, hour, minute, second] = parts;
  const month = MONTHS.indexOf(monthName);
  const [d, h, m, s] = [Number(dayText), Number(hour), Number(minute), Number(second)];
  // A leap second (60) is valid syntax; it reads as the next minute's first second.
  if (h > 23 || m > 59 || s > 60 || d < 1) return undefined;
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999.
  const midnight = new Date(0);
  midnight.setUTCFullYear(year, month, d);
  // A day the month does not have (31 April) rolls over into the next month: no date.
  if (midnight.getUTCDate() !== d) return undefined;
  return midnight.getTime() + ((h * 60 + m) * 60 + s) * 1000;
}

type DateParts = [year: number, month: string, day: string, hour: string, minute: string, second: string];

/** The fields of whichever of the three HTTP-date forms `text` is, or `undefined`. */
function dateParts(text: string, now: number): DateParts | undefined {
  const imf = IMF.exec(text);
  if (imf) return [Number(imf[4]), imf[3] ?? '', imf[2] ?? '', ...time(imf, 5)];
  const rfc850 = RFC850.exec(text);
  if (rfc850) {
    // A two-digit year more than 50 years ahead is in the past century (RFC 9110 §5.6.7).
    const thisYear = new Date(now).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(rfc850[4]);
    if (year > thisYear + 50) year -= 100;
    return [year, rfc850[3] ?? '', rfc850[2] ?? '', ...time(rfc850, 5)];
  }
  const asctime = ASCTIME.exec(text);
  if (asctime) return [Number(asctime[7]), asctime[2] ?? '', (asctime[3] ?? '').trim(), ...time(asctime, 4)];
  return undefined;
}

function time(match: RegExpExecArray, from: number): [string, string, string] {
  return [match[from] ?? '', match[from + 1] ?? '', match[from + 2] ?? ''];
}
