import { errorForStatus } from './error-map.js';
import { APIConnectionError, APITimeoutError, APIUserAbortError, type RequestContext } from './errors.js';
import { headersToObject } from './redact.js';
import { type Transport, type WireRequest, WireTimeout } from './transport.js';

/** A 2xx answer, or a non-2xx one the operation declared to be a result (a refusal body). */
export interface AttemptResult {
  status: number;
  body: unknown;
}

/** What one attempt needs besides the wire request. */
export interface AttemptSpec {
  request: RequestContext;
  timeout: number;
  signal: AbortSignal | undefined;
  /** A non-2xx response whose body is a result, not an error (debit and usage refusals). */
  isResult?: ((status: number, body: unknown) => boolean) | undefined;
}

/** Marks the body read running past the attempt's deadline. */
const BODY_TIMEOUT = Symbol('body timeout');

/**
 * Runs one HTTP attempt within `timeout` ms, body included, and turns every failure into the
 * SDK's error classes: the retry policy then only has to look at classes and statuses.
 *
 * ky's timeout bounds the wait for the headers; the body read gets what is left. No signal of our
 * own is created: ky then needs no `AbortSignal.any` per request, which measurably costs CPU.
 */
export async function attempt(
  transport: Transport,
  wire: Omit<WireRequest, 'signal' | 'timeout'>,
  spec: AttemptSpec,
): Promise<AttemptResult> {
  const { signal, timeout, request } = spec;
  if (signal?.aborted) throw new APIUserAbortError(request, { cause: signal.reason });
  const deadline = Date.now() + timeout;
  let status: number;
  let headers: Headers;
  let text: string;
  try {
    const response = await transport.send({ ...wire, signal, timeout });
    status = response.status;
    headers = response.headers;
    text = await withDeadline(response.text(), deadline - Date.now());
  } catch (cause) {
    if (signal?.aborted) throw new APIUserAbortError(request, { cause: signal.reason });
    if (cause instanceof WireTimeout || cause === BODY_TIMEOUT) throw new APITimeoutError(request, timeout);
    throw new APIConnectionError(request, undefined, { cause });
  }
  const body = parseBody(text);
  if ((status >= 200 && status < 300) || spec.isResult?.(status, body)) return { status, body };
  throw errorForStatus(status, headersToObject(headers), body, request);
}

/**
 * `read`, or a rejection with {@link BODY_TIMEOUT} after `ms`. A body that stalls past the deadline is
 * reported at once; its socket is left to the fetch implementation's own body timeout.
 */
function withDeadline<T>(read: Promise<T>, ms: number): Promise<T> {
  if (!Number.isFinite(ms)) return read;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(reject, Math.max(0, ms), BODY_TIMEOUT);
  });
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}

/** JSON when it parses, the text itself when not (kept for error bodies), `undefined` when empty. */
function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
