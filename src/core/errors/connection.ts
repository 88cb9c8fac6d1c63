/**
 * The errors of a request that got no usable answer: no connection, a timeout, the caller's abort,
 * a body over `maxResponseBytes`.
 *
 * @module
 */
import { BillingError, describeRequest, type RequestContext } from './base.js';
import type { BillingErrorName } from './names.js';

/** How many attempts a call made and how long it took, for the final error's message. */
export interface AttemptStats {
  /** Attempts made, the first included. */
  attempts: number;
  /** Milliseconds from the first attempt to giving up. */
  elapsedMs: number;
}

/**
 * No usable response: DNS failure, refused or reset connection, or a body cut short. `cause` holds
 * the underlying error; the message names it (`ECONNREFUSED 127.0.0.1:4010`), with the attempts
 * made and the time spent.
 */
export class APIConnectionError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'APIConnectionError';
  /** `'APIConnectionError'`, or `'APITimeoutError'` for the subclass. */
  override readonly name: 'APIConnectionError' | 'APITimeoutError' = 'APIConnectionError';
  /** SDK method, HTTP method and path of the failed request. */
  readonly request: RequestContext;
  /** Attempts made before giving up (1 when the call was not retried). */
  readonly attempts: number;
  /** Milliseconds from the first attempt to giving up. */
  readonly elapsedMs: number;

  /**
   * Built by the SDK when no usable response came.
   *
   * @param request - SDK method, HTTP method and path of the request.
   * @param options - `cause`: the underlying error; `message`: replaces the text after the request
   * description; `attempts` and `elapsedMs`: the {@link AttemptStats} of the call (default 1 and 0).
   */
  constructor(
    request: RequestContext,
    options: { cause?: unknown; message?: string | undefined } & Partial<AttemptStats> = {},
  ) {
    const { attempts = 1, elapsedMs = 0 } = options;
    const what = options.message ?? `: connection error: ${causeText(options.cause)}`;
    super(`${describeRequest(request)}${what}${statsText(attempts, elapsedMs)}`, { cause: options.cause });
    this.request = request;
    this.attempts = attempts;
    this.elapsedMs = elapsedMs;
  }
}

function statsText(attempts: number, elapsedMs: number): string {
  return attempts > 1 ? ` (${attempts} attempts in ${(elapsedMs / 1000).toFixed(1)} s)` : '';
}

/** `ECONNREFUSED 127.0.0.1:4010`, `UND_ERR_SOCKET other side closed`: the deepest code and address in a cause chain. */
function causeText(cause: unknown): string {
  let code: string | undefined;
  let where: string | undefined;
  let message: string | undefined;
  for (let c = cause, depth = 0; c && typeof c === 'object' && depth < 5; depth++) {
    const e = c as {
      code?: unknown;
      address?: unknown;
      port?: unknown;
      message?: unknown;
      cause?: unknown;
    };
    if (typeof e.code === 'string') code = e.code;
    if (typeof e.address === 'string') where = e.port === undefined ? e.address : `${e.address}:${e.port}`;
    if (typeof e.message === 'string' && e.message) message = e.message;
    c = e.cause;
  }
  if (code && where) return `${code} ${where}`;
  if (code) return message && !message.includes(code) ? `${code} ${message}` : (message ?? code);
  return message ?? 'no response';
}

/** An attempt took longer than `timeout` ms, headers and body together (retried like a connection error). */
export class APITimeoutError extends APIConnectionError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'APITimeoutError';
  /** Always `'APITimeoutError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'APITimeoutError' as const;
  /** The per-attempt timeout that ran out, in ms. */
  readonly timeoutMs: number;

  /**
   * Built by the SDK when an attempt outlives the `timeout` option.
   *
   * @param request - SDK method, HTTP method and path of the request.
   * @param timeoutMs - The per-attempt timeout that ran out.
   * @param stats - Attempts made and time spent (default 1 and 0).
   */
  constructor(request: RequestContext, timeoutMs: number, stats: Partial<AttemptStats> = {}) {
    super(request, { ...stats, message: ` timed out after ${timeoutMs} ms` });
    this.timeoutMs = timeoutMs;
  }
}

/** The caller's `AbortSignal` fired, during a request or a wait between retries. */
export class APIUserAbortError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'APIUserAbortError';
  /** Always `'APIUserAbortError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'APIUserAbortError' as const;
  /** SDK method, HTTP method and path of the aborted request. */
  readonly request: RequestContext;

  /**
   * Built by the SDK when the caller's signal fires.
   *
   * @param request - SDK method, HTTP method and path of the request.
   * @param options - `cause`: the signal's reason.
   */
  constructor(request: RequestContext, options?: { cause?: unknown }) {
    super(`${describeRequest(request)} was aborted`, options);
    this.request = request;
  }
}

/** A response body was larger than `maxResponseBytes`; reading stopped there and the connection was dropped. */
export class ResponseTooLargeError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'ResponseTooLargeError';
  /** Always `'ResponseTooLargeError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'ResponseTooLargeError' as const;
  /** SDK method, HTTP method and path. */
  readonly request: RequestContext;
  /** HTTP status of the response. */
  readonly status: number;
  /** The limit, in bytes (after decompression). */
  readonly limit: number;
  /** The server's id for this request, when it sent one. */
  readonly requestId: string | undefined;

  /**
   * Built by the SDK when a body passes `maxResponseBytes`.
   *
   * @param request - SDK method, HTTP method and path of the request.
   * @param status - HTTP status of the response.
   * @param limit - The limit that was passed, in bytes.
   * @param requestId - The server's request id, when it sent one.
   */
  constructor(request: RequestContext, status: number, limit: number, requestId: string | undefined) {
    super(
      `${describeRequest(request)} answered ${status} with a body over maxResponseBytes (${limit} bytes); reading stopped`,
    );
    this.request = request;
    this.status = status;
    this.limit = limit;
    this.requestId = requestId;
  }
}
