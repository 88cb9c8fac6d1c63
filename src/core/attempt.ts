import { errorForStatus } from './error-map.js';
import { APIConnectionError, APITimeoutError, APIUserAbortError, type RequestContext } from './errors.js';
import { headersToObject } from './redact.js';
import type { Transport, WireRequest } from './transport.js';

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

/**
 * Runs one HTTP attempt with its own timeout, which covers the body too, and turns every failure
 * into the SDK's error classes: the retry policy then only has to look at classes and statuses.
 */
export async function attempt(
  transport: Transport,
  wire: Omit<WireRequest, 'signal'>,
  spec: AttemptSpec,
): Promise<AttemptResult> {
  const { signal, timeout, request } = spec;
  if (signal?.aborted) throw new APIUserAbortError(request, { cause: signal.reason });
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeout);
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let response: Awaited<ReturnType<Transport['send']>>;
  try {
    response = await transport.send({ ...wire, signal: controller.signal });
  } catch (cause) {
    if (signal?.aborted) throw new APIUserAbortError(request, { cause: signal.reason });
    if (timedOut) throw new APITimeoutError(request, timeout);
    throw new APIConnectionError(request, undefined, { cause });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
  const body = parseBody(response.text);
  const ok = response.status >= 200 && response.status < 300;
  if (ok || spec.isResult?.(response.status, body)) return { status: response.status, body };
  throw errorForStatus(response.status, headersToObject(response.headers), body, request);
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
