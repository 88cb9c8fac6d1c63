/** Header names whose values are credentials or session state: never kept, logged or shown. */
const sensitive = new Set(['authorization', 'x-api-key', 'cookie', 'set-cookie', 'proxy-authorization']);

/**
 * Response headers as a plain lower-cased object without credentials or cookies (a `Headers`), or
 * as given (a plain object: what a user or a test built on purpose).
 */
export function plainHeaders(headers: Headers | Record<string, string>): Record<string, string> {
  if (!(headers instanceof Headers)) return headers;
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!sensitive.has(name)) out[name] = value;
  });
  return out;
}

/** The server's id of a request, as response headers carry it. */
export function requestIdOf(headers: Headers | Record<string, string> | undefined): string | undefined {
  if (!headers) return undefined;
  const plain = plainHeaders(headers);
  return plain['x-request-id'] ?? plain['request-id'];
}

/** `text` with every mention of a secret replaced by `[redacted]`: logs and error causes alike. */
export function scrub(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, s) => (s ? out.split(s).join('[redacted]') : out), text);
}

/**
 * `cause` as it may be attached to an error: unchanged when no level of its chain mentions a
 * secret, else a copy in which every mention is `[redacted]`. An engine error can quote a request
 * header (undici's invalid-header TypeError quotes `Bearer <key>`), and `util.inspect(err)` prints
 * the whole cause chain.
 */
export function scrubCause(cause: unknown, secrets: readonly string[], depth = 0): unknown {
  if (!(cause instanceof Error) || depth > 5 || !secrets.some((s) => s && mentions(cause, s))) return cause;
  const copy = new Error(scrub(cause.message, secrets), {
    cause: scrubCause(cause.cause, secrets, depth + 1),
  });
  copy.name = cause.name;
  copy.stack = scrub(cause.stack ?? '', secrets);
  for (const key of ['code', 'errno', 'syscall', 'address', 'port'] as const) {
    const value = (cause as unknown as Record<string, unknown>)[key];
    if (value !== undefined) (copy as unknown as Record<string, unknown>)[key] = value;
  }
  return copy;
}

/** Whether `error` or anything below it in its cause chain quotes `secret`. */
function mentions(error: unknown, secret: string, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const { message, stack, cause } = error as {
    message?: unknown;
    stack?: unknown;
    cause?: unknown;
  };
  if (typeof message === 'string' && message.includes(secret)) return true;
  if (typeof stack === 'string' && stack.includes(secret)) return true;
  return mentions(cause, secret, depth + 1);
}
