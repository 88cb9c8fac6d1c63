import { field } from './driver-shapes.js';

/** Node's socket errors: the server cannot be reached or the connection broke. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that cannot serve now: shutting down (57P01 admin, 57P02 crash), starting
 * up (57P03), too many connections (53300). Class 08 (connection exception) is matched by prefix.
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

/** postgres.js's own codes of a connection that closed, ended or never opened in time. */
const POSTGRES_JS_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/** Messages node-postgres gives connection failures without a code. */
const MESSAGES =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|Connection ended unexpectedly/i;

/**
 * Postgres errors: connection-level failures (ECONNREFUSED, ECONNRESET, 57P01 admin shutdown, 08xxx,
 * "Connection terminated", postgres.js CONNECTION_* codes) → true.
 */
export function isUnavailable(error: unknown): boolean {
  const code = field(error, 'code');
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || POSTGRES_JS_CODES.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  // Node's connect to several addresses fails with an AggregateError of socket errors.
  const errors = field(error, 'errors');
  if (Array.isArray(errors) && errors.some((inner) => isUnavailable(inner))) return true;
  const message = field(error, 'message');
  return typeof message === 'string' && MESSAGES.test(message);
}
