import { MAX_TIMER_MS } from '../util/timers.js';
import type { Rule } from './checks.js';

/**
 * The longest any `…Ms` option may be: a year. Longer than any ttl, lease or retention a service
 * needs, so a slip (`1e10`, `Infinity`, seconds taken for ms twice) is refused when the object is
 * made, naming the option; and far inside what the SDK's one sleep (util/clock.ts, in chunks),
 * timestamps (`Date.now() + ms`) and Redis's PX carry.
 */
export const MAX_DURATION_MS = 365 * 24 * 60 * 60 * 1000;

const isMs = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * A duration the SDK keeps, compares or waits out through its one sleep (a ttl, a lease, a
 * retention), in ms: a finite number > 0, at most {@link MAX_DURATION_MS}.
 */
export const durationMs: Rule = (v) =>
  isMs(v) && v > 0 && v <= MAX_DURATION_MS
    ? undefined
    : `must be a number of ms > 0 and <= ${MAX_DURATION_MS} (a year)`;

/** As {@link durationMs}, 0 allowed (a pause that can be turned off). */
export const durationMsOrZero: Rule = (v) =>
  isMs(v) && v >= 0 && v <= MAX_DURATION_MS
    ? undefined
    : `must be a number of ms >= 0 and <= ${MAX_DURATION_MS} (a year)`;

/** As {@link durationMs}, a whole number of ms, at least 1 (the access cache's ttls). */
export const wholeDurationMs: Rule = (v) =>
  isMs(v) && Number.isInteger(v) && v >= 1 && v <= MAX_DURATION_MS
    ? undefined
    : `must be a whole number of ms >= 1 and <= ${MAX_DURATION_MS} (a year)`;

/**
 * An option one `setTimeout` waits on directly (a request timeout, a poll interval), in ms: a
 * finite number > 0 that `setTimeout` keeps, at most {@link MAX_TIMER_MS} (a larger one would
 * fire after about 1 ms, a busy loop).
 */
export const timerMs: Rule = (v) =>
  isMs(v) && v > 0 && v <= MAX_TIMER_MS
    ? undefined
    : `must be a number of ms > 0 and <= ${MAX_TIMER_MS} (what one timer can wait)`;
