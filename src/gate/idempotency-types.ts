import type { DedupeStore } from '../webhooks/dedupe.js';

/**
 * How the gate honours a request's `Idempotency-Key` on a route with `credits` (the
 * `idempotency` option of `createGate`). A key is the client's, for one request: it is scoped to
 * the account, and to the route and the need it was first sent with. The gate claims it before the
 * debit, so a request with a key runs its handler once:
 * - the same key while its first request is still in flight: `409` (`idempotency_key_in_flight`);
 * - the same key after its request succeeded (any answer but a 5xx): `422`
 *   (`idempotency_key_used`), never the handler again;
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
  /** The work succeeded: the key is used, and a request reusing it is refused. */
  done(): Promise<void>;
  /** The work failed: the key is free again for the client's retry. */
  failed(): Promise<void>;
}
