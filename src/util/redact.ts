/** Header names whose values are credentials or session state: never kept, logged or shown. */
const sensitive = new Set(['authorization', 'x-api-key', 'cookie', 'set-cookie', 'proxy-authorization']);

/**
 * Header names whose values are URLs: a redirect's `Location` may reflect the request's query (an
 * e-mail), so they are kept without query and fragment.
 */
const urlHeaders = new Set(['location', 'content-location']);

/**
 * Response headers as a plain lower-cased object fit to keep on an error, log or show: credentials
 * and cookies dropped, `Location` and `Content-Location` without query or fragment, and every
 * mention of a `secrets` entry (the API key a server echoed) replaced by `[redacted]` in every
 * value. A plain object is kept as given (what a user or a test built on purpose).
 */
export function plainHeaders(
  headers: Headers | Record<string, string>,
  secrets: readonly string[] = [],
): Record<string, string> {
  if (!(headers instanceof Headers)) return headers;
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (sensitive.has(name)) return;
    const kept = scrub(value, secrets);
    out[name] = urlHeaders.has(name) ? withoutQuery(kept) : kept;
  });
  return out;
}

/** `url` without its query and fragment (absolute or relative): what a message may say of a link. */
export function withoutQuery(url: string): string {
  const cut = url.search(/[?#]/);
  return cut === -1 ? url : url.slice(0, cut);
}

/** Whether a header of this name carries a credential, so its configured value is a secret too. */
export function isSensitiveHeader(name: string): boolean {
  return sensitive.has(name.toLowerCase());
}

/**
 * The strings a client must never show for `apiKey` and the headers it sends: each as given and as
 * a URL would carry it (percent-encoded), so a server echoing it in a `Location` query is caught.
 */
export function secretsOf(apiKey: string, headers: Record<string, string> = {}): string[] {
  const given = [
    apiKey,
    ...Object.entries(headers)
      .filter(([name]) => isSensitiveHeader(name))
      .map(([, value]) => value),
  ].filter((s) => s !== '');
  const all = new Set<string>();
  for (const s of given) {
    all.add(s);
    all.add(encodeURIComponent(s));
  }
  // Longest first: a secret inside another is replaced once the longer one is gone.
  return [...all].sort((a, b) => b.length - a.length);
}

/**
 * `value` (a parsed body: JSON or text) with every mention of a secret `[redacted]`, in strings,
 * array items, object keys and values, at any depth; the same value when nothing mentions one.
 */
export function scrubValue(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') return scrub(value, secrets);
  if (!value || typeof value !== 'object') return value;
  // Deeper than any answer of the API: not walked, so not kept either.
  if (depth > 64) return '[too deep]';
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, secrets, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [scrub(k, secrets), scrubValue(v, secrets, depth + 1)]),
  );
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
