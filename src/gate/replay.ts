import type { GateAnswer } from './idempotency-types.js';

/** The headers a replay carries: what describes the body, never what sets state (cookies). */
const KEPT_HEADERS = ['content-type', 'content-language', 'location'] as const;

/** The most `replay.maxBytes` may be: the stores keep each answer beside its key for `rememberMs`. */
export const MAX_REPLAY_BYTES = 1024 * 1024;

/** `replay.maxBytes` when unset. */
export const DEFAULT_REPLAY_BYTES = 8 * 1024;

/** An answer as a store keeps it (JSON in the store's string). */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The statuses worth replaying: a 5xx frees the key instead (its retry runs again). */
export const replayable = (status: number): boolean => status >= 200 && status < 500;

/** The kept headers among those `get` reads (a Fetch `Headers`'s, a Node response's). */
export function keptHeaders(get: (name: string) => string | undefined): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = get(name);
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

const utf8 = /* @__PURE__ */ new TextEncoder();

/**
 * An answer's body as it is sent, kept up to `max` bytes: past them, or a chunk that is no UTF-8
 * text, nothing is kept and {@link AnswerBody.text} is `undefined` (the key is used, not replayed).
 */
export class AnswerBody {
  #chunks: Uint8Array[] = [];
  #size = 0;
  #spoiled = false;

  constructor(readonly max: number) {}

  /** A chunk as sent: bytes, or a string in `encoding` (UTF-8 when none). */
  add(chunk: unknown, encoding?: unknown): void {
    if (this.#spoiled || chunk === undefined || chunk === null) return;
    const text =
      typeof chunk === 'string' && (encoding === undefined || encoding === 'utf8' || encoding === 'utf-8');
    const bytes = text ? utf8.encode(chunk) : chunk instanceof Uint8Array ? chunk : undefined;
    if (bytes === undefined) {
      this.spoil(); // a string in another encoding, or what no framework sends
      return;
    }
    this.#size += bytes.byteLength;
    // Copied: a framework may reuse its buffer once the write returned.
    if (this.#size > this.max) this.spoil();
    else this.#chunks.push(bytes.slice());
  }

  /** Nothing of this body is kept (too large, not text). */
  spoil(): void {
    this.#spoiled = true;
    this.#chunks = [];
  }

  /** The body as text, or `undefined` when it was spoiled or is no well-formed UTF-8. */
  text(): string | undefined {
    if (this.#spoiled) return undefined;
    const all = new Uint8Array(this.#size);
    let at = 0;
    for (const chunk of this.#chunks) {
      all.set(chunk, at);
      at += chunk.byteLength;
    }
    try {
      return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(all);
    } catch {
      return undefined;
    }
  }
}

/** A `gate.check` caller's answer, as the store keeps it; `undefined` when it is not to be kept. */
export function storedOf(answer: GateAnswer, maxBytes: number): StoredAnswer | undefined {
  const { status, headers = {}, body = '' } = answer;
  if (typeof status !== 'number' || !replayable(status) || typeof body !== 'string') return undefined;
  if (utf8.encode(body).byteLength > maxBytes) return undefined;
  const lower = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return { status, headers: keptHeaders((name) => lower.get(name)), body };
}

/** What a store read back, if it is an answer this gate stored (else `undefined`: not replayed). */
export function parseAnswer(text: unknown): StoredAnswer | undefined {
  if (typeof text !== 'string') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const a = parsed as Partial<StoredAnswer> | null;
  if (typeof a !== 'object' || a === null || typeof a.status !== 'number' || !replayable(a.status)) {
    return undefined;
  }
  if (typeof a.body !== 'string' || typeof a.headers !== 'object' || a.headers === null) return undefined;
  const headers = keptHeaders((name) => {
    const value = (a.headers as Record<string, unknown>)[name];
    return typeof value === 'string' ? value : undefined;
  });
  return { status: a.status, headers, body: a.body };
}

/** Statuses whose answer has no body (the Fetch `Response` refuses one). */
const NULL_BODY = new Set([204, 205, 304]);

/**
 * The stored answer, sent again: `Idempotent-Replayed: true` says so (as Stripe's), and no cache
 * may keep it (it is one account's).
 */
export function replayed(answer: StoredAnswer): Response {
  const body = NULL_BODY.has(answer.status) || answer.body === '' ? null : answer.body;
  return new Response(body, {
    status: answer.status,
    headers: { ...answer.headers, 'idempotent-replayed': 'true', 'cache-control': 'no-store' },
  });
}
