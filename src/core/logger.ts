import { scrub } from '../util/redact.js';

/** Levels, least to most verbose. `'off'` logs nothing. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

/** Anything with console's four methods: `console`, pino, winston, a test spy. */
export interface Logger {
  /** Receives lines at level `error` (none are written today: failures are thrown, not logged). */
  error(message: string, ...rest: unknown[]): void;
  /** Receives lines at level `warn`: a response that did not match its schema under `validation: 'warn'`. */
  warn(message: string, ...rest: unknown[]): void;
  /** Receives lines at level `info`: each retry, with its delay and the error that caused it. */
  info(message: string, ...rest: unknown[]): void;
  /** Receives lines at level `debug`: each attempt's method, path, status, time and request id. */
  debug(message: string, ...rest: unknown[]): void;
}

const rank: Record<LogLevel, number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4 };

/** A logger that drops what is above `level` and removes every occurrence of the given secrets. */
export interface SdkLogger {
  /** Whether a message at `level` would be written: lets callers skip building it. */
  enabled(level: Exclude<LogLevel, 'off'>): boolean;
  /** Writes `message` at `level` (when enabled), prefixed and with the secrets removed. */
  log(level: Exclude<LogLevel, 'off'>, message: string): void;
}

/**
 * Wraps the user's logger. Secrets are scrubbed here, at the last step before output, so that
 * no call site can forget: even a message that somehow quoted the key prints `[redacted]`.
 * Whatever the logger throws is swallowed: logging must never turn a committed debit into a
 * rejection.
 */
export function createLogger(target: Logger, level: LogLevel, secrets: readonly string[]): SdkLogger {
  const max = rank[level];
  return {
    enabled: (l) => rank[l] <= max,
    log(l, message) {
      if (rank[l] > max) return;
      try {
        target[l](`[billing-sdk] ${scrub(message, secrets)}`);
      } catch {
        // A broken logger loses a line, never a result.
      }
    },
  };
}
