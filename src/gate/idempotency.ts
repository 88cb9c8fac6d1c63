import { InvalidRequestError, StoreError } from '../core/errors/index.js';
import { check, func, integer, isPlainObject, positiveNumber, type Rule } from '../internal/checks.js';
import { sha256 } from '../util/digest.js';
import { randomUUID } from '../util/uuid.js';
import { DEFAULT_CLAIM_TTL_MS, keepClaimed } from '../webhooks/claim-run.js';
import { CLAIM_OUTCOMES, type ClaimOutcome, type DedupeStore } from '../webhooks/dedupe.js';
import { memoryDedupeStore } from '../webhooks/memory-dedupe.js';
import { problem } from './answer.js';
import type { GateAnswer, GateIdempotency, GateIdempotencyOptions } from './idempotency-types.js';
import type { CheckedNeeds } from './needs.js';
import {
  AnswerBody,
  DEFAULT_REPLAY_BYTES,
  MAX_REPLAY_BYTES,
  parseAnswer,
  replayable,
  replayed,
  type StoredAnswer,
  storedOf,
} from './replay.js';
import { headerOf } from './request.js';
import type { GateDenied, GateRequest } from './types.js';

/** Stripe keeps a key 24 h. */
const DEFAULT_REMEMBER_MS = 24 * 60 * 60 * 1000;
/** The draft's keys are short strings; a longer one is refused before it costs a digest. */
export const MAX_KEY_LENGTH = 255;
/** Printable ASCII (the draft's sf-string), space included. */
const KEY_CHARS = /^[\x20-\x7e]+$/;

const rules = {
  store: [
    (v: unknown) =>
      typeof v === 'object' &&
      v !== null &&
      ['claim', 'renew', 'complete', 'release'].every(
        (m) => typeof (v as Record<string, unknown>)[m] === 'function',
      )
        ? undefined
        : 'must be a DedupeStore (claim, renew, complete, release)',
  ],
  rememberMs: [positiveNumber],
  claimTtlMs: [positiveNumber],
  fingerprint: [func],
  replay: [
    (v: unknown) =>
      typeof v === 'boolean' || isPlainObject(v) ? undefined : 'must be a boolean or { maxBytes }',
  ],
} satisfies Record<keyof GateIdempotencyOptions, Rule[]>;

const replayRules = { maxBytes: [integer(1, MAX_REPLAY_BYTES)] };

/** A gate's keys: the store, the claim's TTL, the app's fingerprint. */
export interface Idempotency<Req> {
  store: DedupeStore;
  claimTtlMs: number;
  fingerprint: GateIdempotencyOptions<Req>['fingerprint'];
  /**
   * With `replay` on and a store that reads answers back: the largest body kept. `undefined`: no
   * answer is kept, and the adapters record none (no work for it on any request).
   */
  replayBytes: number | undefined;
}

/**
 * The gate's keys from its `idempotency` option, checked once.
 *
 * @throws {@link InvalidRequestError} naming each bad option.
 */
export function idempotencyOf<Req>(given: GateIdempotencyOptions<Req> | undefined): Idempotency<Req> {
  const options = (
    given === undefined ? {} : check('createGate', given, rules, undefined, 'options.idempotency.')
  ) as GateIdempotencyOptions<Req>;
  const { replay } = options;
  if (typeof replay === 'object')
    check('createGate', replay, replayRules, undefined, 'options.idempotency.replay.');
  const store =
    options.store ?? memoryDedupeStore({ max: 10_000, doneTtlMs: options.rememberMs ?? DEFAULT_REMEMBER_MS });
  // A store of the app's own without `answer` keeps none: replay is off for it (the key gets 422).
  const replays = replay !== undefined && replay !== false && typeof store.answer === 'function';
  return {
    store,
    claimTtlMs: options.claimTtlMs ?? DEFAULT_CLAIM_TTL_MS,
    fingerprint: options.fingerprint,
    replayBytes: replays
      ? ((replay === true ? undefined : replay.maxBytes) ?? DEFAULT_REPLAY_BYTES)
      : undefined,
  };
}

/**
 * The claim a request holds on its key while it is served: two ids of the store, the request's
 * (account, key, route, fingerprint) and the key's (account, key), so the same key with another
 * request is told apart from a retry. Closed once: done, or released for the retry.
 */
export class KeyClaim implements GateIdempotency {
  readonly key: string;
  /** The base of the debit's `event_key`: the request's own digest. */
  readonly #event: string;
  readonly #ids: readonly [string, string];
  readonly #token: string;
  readonly #keys: Idempotency<unknown>;
  #stop: (() => void) | undefined;
  #closed: Promise<void> | undefined;
  /** The answer sent, recorded by the adapter (replay on), kept by `close` if its status is the one. */
  #answer: StoredAnswer | undefined;

  constructor(
    key: string,
    event: string,
    ids: readonly [string, string],
    token: string,
    keys: Idempotency<unknown>,
  ) {
    this.key = key;
    this.#event = event;
    this.#ids = ids;
    this.#token = token;
    this.#keys = keys;
  }

  /**
   * The `event_key` of the request's `index`th credits need of `count`: the same for every retry of
   * this key on this route, and for no other account, route or key.
   */
  eventKey(index: number, count: number): string {
    return count === 1 ? `gate_${this.#event}` : `gate_${this.#event}_${index}`;
  }

  /**
   * Renews the claim while the handler runs (an adapter's request; `gate.check`'s are not);
   * `report` is told when it lapsed all the same.
   */
  keep(report: (error: unknown) => void): void {
    if (this.#stop || this.#closed) return;
    const { store, claimTtlMs } = this.#keys;
    const stops = this.#ids.map((id) => keepClaimed(store, id, this.#token, claimTtlMs, report, lostKey));
    this.#stop = () => {
      for (const stop of stops) stop();
    };
  }

  done(answer?: GateAnswer): Promise<void> {
    const bytes = this.#keys.replayBytes;
    if (answer !== undefined && bytes !== undefined) this.#answer = storedOf(answer, bytes);
    return this.#close(true);
  }

  /**
   * Where an adapter collects the body it sends, when this gate replays answers: `undefined`
   * (nothing to collect) when it does not.
   */
  answerBody(): AnswerBody | undefined {
    const bytes = this.#keys.replayBytes;
    return bytes === undefined ? undefined : new AnswerBody(bytes);
  }

  /**
   * The answer sent (its status, its kept headers, and `body`'s text): kept with the key by
   * {@link close} when it closes with the same status; not when the body was not kept.
   */
  answered(status: number, headers: Record<string, string>, body: AnswerBody): void {
    const text = body.text();
    if (text !== undefined && replayable(status)) this.#answer = { status, headers, body: text };
  }

  failed(): Promise<void> {
    return this.#close(false);
  }

  /**
   * After the answer: a 5xx or none (the handler threw, the client went away) frees the key for the
   * retry; any other answer uses it up.
   */
  close(status: number | undefined): Promise<void> {
    if (this.#answer?.status !== status) this.#answer = undefined;
    return this.#close(status !== undefined && status < 500);
  }

  #close(succeeded: boolean): Promise<void> {
    this.#closed ??= (async () => {
      this.#stop?.();
      const { store } = this.#keys;
      const token = this.#token;
      const [request, key] = this.#ids;
      // Done: the request's id first, so a reuse with another request still meets the key's claim.
      // Failed: the key's first, so the retry meets its own request's claim (409), never a mismatch.
      if (succeeded) {
        const answer = this.#answer && JSON.stringify(this.#answer);
        let unkept: unknown;
        if (answer === undefined) await store.complete(request, token);
        else {
          // An answer the store could not keep still uses the key (422, not a second run); the
          // store's error is told after.
          await Promise.resolve(store.complete(request, token, answer)).catch(async (error: unknown) => {
            unkept = { error };
            await store.complete(request, token);
          });
        }
        await store.complete(key, token);
        if (unkept) throw (unkept as { error: unknown }).error;
      } else {
        await store.release(key, token);
        await store.release(request, token);
      }
    })();
    return this.#closed;
  }
}

function lostKey(_id: string, ttlMs: number): Error {
  return new Error(
    `an Idempotency-Key's claim lapsed while its request was served (claimTtlMs ${ttlMs}): a retry ` +
      'may have run alongside it (charged once all the same). Was this process stalled, or the store unreachable?',
  );
}

/** Why a key stops a request: the gate's answer to it. */
export type KeyRefusal =
  | 'idempotency_key_invalid'
  | 'idempotency_key_in_flight'
  | 'idempotency_key_used'
  | 'idempotency_key_mismatch';

/**
 * The request's `Idempotency-Key`, claimed for this account and route: `undefined` when it has
 * none (nothing else is done then: no digest, no store), a {@link KeyClaim} to charge under, the
 * gate's refusal, the answer to replay (a used key, on a gate with `replay`), or `'unavailable'`
 * when the store failed (the gate then fails closed).
 */
export async function claimKey<Req extends GateRequest>(
  keys: Idempotency<Req>,
  request: Req,
  account: string,
  needs: CheckedNeeds<Req>,
): Promise<KeyClaim | KeyRefusal | StoredAnswer | 'unavailable' | undefined> {
  const key = headerOf(request, 'idempotency-key');
  if (!key) return undefined;
  if (key.length > MAX_KEY_LENGTH || !KEY_CHARS.test(key)) return 'idempotency_key_invalid';
  const print = (await keys.fingerprint?.(request)) ?? '';
  if (typeof print !== 'string') {
    throw new InvalidRequestError('gate', [
      { field: 'idempotency.fingerprint', message: 'must answer a string or undefined' },
    ]);
  }
  const [mine, ours] = await Promise.all([
    sha256(['request', account, key, routeOf(request, needs), print]),
    sha256(['key', account, key]),
  ]);
  const ids = [`gate:request:${mine}`, `gate:key:${ours}`] as const;
  const token = randomUUID();
  const { store, claimTtlMs } = keys;
  try {
    const request = await claimed(store, ids[0], token, claimTtlMs);
    if (request === 'processing') return 'idempotency_key_in_flight';
    if (request === 'done') return (await storedAnswer(keys, ids[0])) ?? 'idempotency_key_used';
    const key = await claimed(store, ids[1], token, claimTtlMs).catch(async (error: unknown) => {
      await Promise.resolve(store.release(ids[0], token)).catch(() => {});
      throw error;
    });
    if (key !== 'claimed') {
      // The key is held, or was used, by another request of this account.
      await store.release(ids[0], token);
      return 'idempotency_key_mismatch';
    }
  } catch {
    // As a debit the service could not answer: the gate fails closed (503), never runs unclaimed.
    return 'unavailable';
  }
  return new KeyClaim(key, mine, ids, token, keys as Idempotency<unknown>);
}

/** The answer kept with a used key's request, when this gate replays and one was kept. */
async function storedAnswer<Req>(keys: Idempotency<Req>, id: string): Promise<StoredAnswer | undefined> {
  if (keys.replayBytes === undefined) return undefined;
  return parseAnswer(await keys.store.answer?.(id));
}

async function claimed(store: DedupeStore, id: string, token: string, ttlMs: number): Promise<ClaimOutcome> {
  const outcome: unknown = await store.claim(id, token, ttlMs);
  if (!CLAIM_OUTCOMES.includes(outcome)) {
    throw new StoreError('unexpected_reply', `idempotency store's claim answered ${String(outcome)}`);
  }
  return outcome as ClaimOutcome;
}

/** The route a request's key is bound to: its method, its path, and the route's credits. */
const routes = /* @__PURE__ */ new WeakMap<object, string>();
function routeOf<Req extends GateRequest>(request: Req, needs: CheckedNeeds<Req>): string {
  let charged = routes.get(needs);
  if (charged === undefined) {
    charged = JSON.stringify(
      needs.credits.map((c) => [
        c.product_code,
        c.meter_code,
        typeof c.quantity === 'number' ? c.quantity : 'f',
        c.hold ? 1 : 0,
      ]),
    );
    routes.set(needs, charged);
  }
  return `${(request.method ?? 'GET').toUpperCase()} ${pathOf(request)} ${charged}`;
}

/** The request's path without its query: a Fetch `Request`'s URL, Express's `originalUrl`, Node's `url`. */
function pathOf(request: GateRequest): string {
  const r = request as { url?: unknown; originalUrl?: unknown };
  const url = typeof r.originalUrl === 'string' ? r.originalUrl : typeof r.url === 'string' ? r.url : '';
  const path = /^[a-z][a-z0-9+.-]*:\/\//i.test(url)
    ? url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '')
    : url;
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}

const DETAILS: Record<KeyRefusal, [number, string]> = {
  idempotency_key_invalid: [
    400,
    `The Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters.`,
  ],
  idempotency_key_in_flight: [
    409,
    'A request with this Idempotency-Key is still being processed; retry later.',
  ],
  idempotency_key_used: [
    422,
    'This Idempotency-Key was already used by a request that completed; send a new key for a new request.',
  ],
  idempotency_key_mismatch: [
    422,
    'This Idempotency-Key was used with another request (another route or body); send a new key for a new request.',
  ],
};

/** The stored answer of a used key's request, sent again: its handler does not run, nothing is charged. */
export function replayKey(answer: StoredAnswer, account: string): GateDenied {
  return {
    allowed: false,
    reason: 'idempotency_key_replayed',
    status: answer.status,
    account_ref_id: account,
    response: replayed(answer),
  };
}

/** The gate's answer to a request its key stops (RFC 9457, like every refusal of the gate). */
export function refuseKey(reason: KeyRefusal, account: string): GateDenied {
  const [status, detail] = DETAILS[reason];
  const headers: Record<string, string> = status === 409 ? { 'retry-after': '1' } : {};
  return {
    allowed: false,
    reason,
    status,
    account_ref_id: account,
    response: problem(status, reason, detail, {}, headers),
  };
}
