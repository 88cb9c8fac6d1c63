import { CORS_HEADERS } from './cors.js';
import { gzip } from './encoding.js';
import { defaultFaultBody } from './errors.js';
import type { Fault } from './faults.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import { stalledResponse } from './stall.js';

/** What every `/api/` answer needs besides the fault: its id, CORS, and the client's signal. */
export interface AnswerContext {
  requestId: string;
  cors: boolean;
  /** Aborts when the client goes away; ends a stalled body. */
  signal: AbortSignal;
}

/** Statuses whose answers may not carry a body (the Response constructor throws otherwise). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

const encoder = new TextEncoder();

/**
 * Status fault bodies, encoded (and gzipped) once per fault: a soak with `times: Infinity` or a
 * 64 MB body would otherwise pay for the encoding on every request.
 */
const statusBodies = new WeakMap<Fault, Uint8Array<ArrayBuffer>>();

function statusFaultBody(fault: Fault, status: number): Uint8Array<ArrayBuffer> {
  const cached = statusBodies.get(fault);
  if (cached) return cached;
  // Copied into its own ArrayBuffer: a Buffer may view a shared pool, and the caller may reuse it.
  const raw = fault.bodyBytes
    ? new Uint8Array(fault.bodyBytes)
    : encoder.encode(fault.body ?? defaultFaultBody(status));
  const body = fault.encoding === 'gzip' ? gzip(raw) : raw;
  statusBodies.set(fault, body);
  return body;
}

function headersFor(base: HeadersInit, fault: Fault | undefined, context: AnswerContext): Headers {
  const headers = new Headers(base);
  headers.set(REQUEST_ID_HEADER, context.requestId);
  for (const [name, value] of Object.entries(fault?.headers ?? {})) headers.set(name, value);
  if (context.cors) for (const [name, value] of Object.entries(CORS_HEADERS)) headers.set(name, value);
  return headers;
}

function build(
  body: Uint8Array<ArrayBuffer> | null,
  init: ResponseInit,
  fault: Fault | undefined,
  context: AnswerContext,
): Response {
  if (body === null || NULL_BODY_STATUSES.has(init.status ?? 200)) return new Response(null, init);
  if (fault?.stall === 'body') return stalledResponse(body, init, context.signal);
  return new Response(body, init);
}

/** The answer of a status fault: the handler never runs, so nothing changes in the store. */
export function statusFaultAnswer(fault: Fault, status: number, context: AnswerContext): Response {
  const headers = headersFor({ 'content-type': 'application/json' }, fault, context);
  if (fault.encoding === 'gzip') headers.set('content-encoding', 'gzip');
  const body = NULL_BODY_STATUSES.has(status) ? null : statusFaultBody(fault, status);
  return build(body, { status, headers }, fault, context);
}

/**
 * The handler's answer with the request id, the fault's headers and CORS added, compressed
 * and/or stalled when the fault says so. Without either, the body streams through untouched.
 */
export async function handlerAnswer(
  response: Response,
  fault: Fault | undefined,
  context: AnswerContext,
): Promise<Response> {
  const headers = headersFor(response.headers, fault, context);
  const init = { status: response.status, statusText: response.statusText, headers };
  if (fault?.encoding === undefined && fault?.stall === undefined) return new Response(response.body, init);
  let body = new Uint8Array(await response.arrayBuffer());
  if (fault.encoding === 'gzip' && !NULL_BODY_STATUSES.has(response.status)) {
    body = gzip(body);
    headers.set('content-encoding', 'gzip');
    headers.delete('content-length');
  }
  return build(body, init, fault, context);
}
