/**
 * The longest a cooldown lasts after one 429, in ms: one hour, whatever its Retry-After asked (ten
 * years, a date far ahead). One answer must not stop a client (or, shared through Redis, a fleet)
 * for longer: after the hour one request goes as the probe, and a service still refusing starts
 * another hour. The request that met the 429 itself still sees the whole `retryAfterMs`.
 */
export const MAX_COOLDOWN_MS = 60 * 60 * 1000;

/** `retryAfterMs` as a cooldown keeps it: at most {@link MAX_COOLDOWN_MS}, never negative. */
export function cooldownWindow(retryAfterMs: number): number {
  return Math.min(MAX_COOLDOWN_MS, Math.max(0, retryAfterMs));
}

/**
 * What a {@link Cooldown} answers before an attempt: wait this long and ask again, or go (and
 * report the outcome with `release`). A cooldown may also answer with a promise, e.g. of a wait of 0
 * once a probe in flight has its answer.
 */
export type CooldownGrant =
  | {
      /** Milliseconds to wait before asking again. */
      waitMs: number;
    }
  | {
      /**
       * Called once the attempt ended: `retryAfterMs` is the Retry-After of a 429 (the client passes
       * at most {@link MAX_COOLDOWN_MS}), else `undefined`.
       */
      release(now: number, retryAfterMs: number | undefined): void | Promise<void>;
    };

/**
 * A cooldown shared by every request of a client, or of several clients given the same object
 * (`new BillingClient({ cooldown })`): after a 429 with Retry-After, requests wait until the time
 * has passed, then one request goes first as the probe, and only when it is not refused do the
 * others follow. During a storm of 429s the service sees one request per Retry-After window, not
 * one per request in flight. A window lasts at most {@link MAX_COOLDOWN_MS} (one hour). A request
 * the cooldown would hold longer than the client's `maxRetryDelay` fails at once with a
 * `RateLimitError` carrying the wait left as `retryAfterMs`, nothing sent. Times are the client's
 * clock (ms since the epoch).
 */
export interface Cooldown {
  /** Asked before each attempt. */
  acquire(now: number): CooldownGrant | Promise<CooldownGrant>;
}

/**
 * The in-process {@link Cooldown}: each client has its own unless one is passed in options. Pass
 * the same one to several clients in a process to share their cooldown.
 *
 * @example
 * ```ts
 * const cooldown = memoryCooldown();
 * const a = new BillingClient({ cooldown });
 * const b = new BillingClient({ cooldown, timeout: 5_000 });
 * ```
 */
export function memoryCooldown(): Cooldown {
  let until = 0;
  let cooling = false;
  /** Settles when the probe in flight has its answer; requests that wait for it then ask again. */
  let probe: Promise<CooldownGrant> | undefined;
  const cool = (now: number, retryAfterMs: number) => {
    until = Math.max(until, now + cooldownWindow(retryAfterMs));
    cooling = true;
  };
  // Requests outside a cooldown can only start one; ending it is the probe's.
  const free: CooldownGrant = {
    release: (now, retryAfterMs) => {
      if (retryAfterMs !== undefined) cool(now, retryAfterMs);
    },
  };
  return {
    acquire(now) {
      if (now < until) return { waitMs: until - now };
      if (!cooling) return free;
      if (probe) return probe;
      let answered: (grant: CooldownGrant) => void = () => {};
      probe = new Promise((resolve) => {
        answered = resolve;
      });
      return {
        release: (later, retryAfterMs) => {
          probe = undefined;
          if (retryAfterMs === undefined) cooling = false;
          else cool(later, retryAfterMs);
          // The waiters ask again: they go now, or wait out the new window.
          answered({ waitMs: 0 });
        },
      };
    },
  };
}
