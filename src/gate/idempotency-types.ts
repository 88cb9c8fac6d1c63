import type { DedupeStore } from '../webhooks/dedupe.js';

/**
 * How the gate honours a request's `Idempotency-Key` on a route with `credits` (the
 * `idempotency` option of `createGate`). A key is the client's, for one request: it is scoped to
 * the account, and to the route and the need it was first sent with. The gate claims it before the
 * debit, so a request with a key runs its handler once:
 * - the same key while its first request is still in flight: `409` (`idempotency_key_in_flight`);
 * - the same key after its request succeeded (any answer but a 5xx): `422`
 *   (`idempotency_key_used`), never the handler again; or, with `replay`, that answer sent again
 *   (`Idempotent-Replayed: true`) when it was small enough to keep;
 * - the same key with another request (another route, another body when `fingerprint` tells them
 *   apart): `422` (`idempotency_key_mismatch`);
 * - the same key after its request failed (the handler threw or answered 5xx, the client went away
 *   before the answer): the handler runs again, and the debit is the first one (charged once);
 * - a key longer than 255 characters, or with characters other than printable ASCII: `400`
 *   (`idempotency_key_invalid`), never sent to the service.
 */
export interface GateIdempotencyOptions<Req = Request> {
  /**
   * Where the keys' claims are kept: any `DedupeStore` (the webhook handlers' contract), one per
   * purpose. Default: a `memoryDedupeStore` of this process, of 10 000 keys, remembering each
   * `rememberMs`. With several instances, a shared one: `redisDedupeStore(redis, { prefix:
   * 'billing-sdk:gate:', doneTtlMs })` from `billing-sdk/redis`, or `postgresDedupeStore(pool, {
   * table: 'billing_sdk_gate_keys', doneTtlMs })` from `billing-sdk/postgres`; their `doneTtlMs`
   * is how long they remember a key.
   */
  store?: DedupeStore | undefined;
  /**
   * How long the default store remembers a key whose request succeeded, in ms: a reuse within it
   * is refused, a reuse after it runs as a new request. Default 24 h (as Stripe keeps keys).
   */
  rememberMs?: number | undefined;
  /**
   * How long a request in flight holds its key before the claim lapses unless renewed, in ms: the
   * adapters renew it every third of this while the handler runs, so it is the longest a crashed
   * instance blocks the key's retry. Default 60 000.
   */
  claimTtlMs?: number | undefined;
  /**
   * What tells two requests on the same route apart (their body, parsed as your app does): the same
   * key with another fingerprint is refused with `422`. Default: the route alone (method, path and
   * needs).
   */
  fingerprint?: ((request: Req) => string | undefined | Promise<string | undefined>) | undefined;
  /**
   * Send a used key's stored answer again instead of refusing it (as Stripe does): `true`, or
   * `{ maxBytes }`. Default off. On, an answer below 500 whose body is at most `maxBytes` (default
   * 8 192, at most 1 048 576) of UTF-8 text is kept with the key (its status, its `content-type`,
   * `content-language` and `location`, never `set-cookie`), and the same request (same account,
   * route and fingerprint) with that key gets it again with `Idempotent-Replayed: true`: the
   * handler does not run, nothing is charged. A larger body, one that is not text, or a store
   * without `answer` (a `DedupeStore` of your own written before it): the key is used, `422` as
   * without `replay`. The default memory store holds 10 000 keys, so as many answers of up to
   * `maxBytes`. Another request with the key is still `422` (`idempotency_key_mismatch`), and
   * one while it is in flight `409`.
   */
  replay?: boolean | GateReplayOptions | undefined;
}

/** The `replay` option of {@link GateIdempotencyOptions} as an object. */
export interface GateReplayOptions {
  /**
   * The largest body kept for a replay, in bytes of UTF-8: an integer from 1 to 1 048 576. Default
   * 8 192. Each kept answer stays in the store as long as its key (`rememberMs`, or the store's
   * `doneTtlMs`).
   */
  maxBytes?: number | undefined;
}

/**
 * The answer a `gate.check` caller gives `decision.idempotency.done(answer)` to be replayed (with
 * the `replay` option): kept when `status` is below 500 and `body` at most `maxBytes` of UTF-8.
 */
export interface GateAnswer {
  /** The answer's status. */
  status: number;
  /** Its headers; only `content-type`, `content-language` and `location` are kept. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** Its body, as text. Default empty. */
  body?: string | undefined;
}

/**
 * The claim of a request's `Idempotency-Key` (`decision.idempotency`), held while the request is
 * served. The adapters mark it after the answer; under `gate.check`, mark it yourself once the work
 * is done: `done()` after it succeeded, `failed()` after it failed (so the client's retry runs it
 * again, charged once). A claim never marked lapses after `claimTtlMs`, and the key may run again.
 */
export interface GateIdempotency {
  /** The request's `Idempotency-Key`, as the client sent it. */
  readonly key: string;
  /**
   * The work succeeded: the key is used, and a request reusing it is refused; or, on a gate with
   * `replay`, sent `answer` again when given (and small enough: see {@link GateAnswer}). The
   * adapters pass the answer they sent themselves.
   */
  done(answer?: GateAnswer): Promise<void>;
  /** The work failed: the key is free again for the client's retry. */
  failed(): Promise<void>;
}
