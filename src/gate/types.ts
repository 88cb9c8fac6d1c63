import type { AccessCache } from '../access/cache.js';
import type { BillingClient } from '../client.js';
import type { CreditHold, CreditHolds } from '../credits/types.js';
import type { DebitApproved } from '../schemas/usage.js';
import type { UsageTracker } from '../tracker/types.js';
import type { GateIdempotency, GateIdempotencyOptions } from './idempotency-types.js';
import type { AccountStateHandler, AccountStateView, PaywallTarget } from './state-types.js';

export type { PaywallTarget } from './state-types.js';

/**
 * What a gate reads of a request, whichever way the framework hands it over: a Fetch `Request`
 * (`check`, `protect`, Hono's `c.req.raw`), Node's `IncomingMessage` (Express, Connect, node:http)
 * or Fastify's request. Only the method and three headers are read (`accept`, `idempotency-key`).
 */
export interface GateRequest {
  /** The HTTP method (`GET`, `POST`, …). */
  readonly method?: string | undefined;
  /** A Fetch `Headers`, or Node's header object (lower-case names). */
  readonly headers:
    | {
        /** A header's value, or `null` when absent (a Fetch `Headers`). */
        get(name: string): string | null;
      }
    | Readonly<Record<string, string | string[] | undefined>>;
}

/** A quantity, or how to read it from the request (a `count` in its body, a size in a header). */
export type GateQuantity<Req> = number | ((request: Req) => number | Promise<number>);

/** The account has an active subscription (with `tier`, that tier): `access.isActive`. */
export interface SubscriptionNeed {
  /** The subscription product's label name, as `accounts.status`'s `subscription`. */
  subscription: string;
  /** The tier's label name; optional. */
  tier?: string | undefined;
}

/** The account has an entitlement: `access.hasEntitlement`. */
export interface EntitlementNeed {
  /** The product and entitlement codes, as `entitlements.check` takes them. */
  entitlement: {
    /** The product's code. */
    product_code: string;
    /** The entitlement's code. */
    entitlement_code: string;
  };
}

/**
 * Prepaid credits are debited before the handler runs (`usage.debit`), once per client request; or,
 * with `hold: true`, reserved before it and settled with what it used after it. On a gate with
 * `holds` a plain need is reserved and settled at once through them. A route may have several only
 * on a gate with `holds` (all are reserved before any is debited).
 */
export interface CreditsNeed<Req = GateRequest> {
  /** The product and meter to debit, and how many credits. */
  credits: {
    /** The prepaid-credits product's code. */
    product_code: string;
    /** The meter to debit. */
    meter_code: string;
    /**
     * Credits to debit (with `hold`, the most the route may cost): a positive integer, or a
     * function of the request that gives one.
     */
    quantity: GateQuantity<Req>;
    /**
     * Reserve `quantity` through the gate's `holds` instead of debiting it: the handler says what it
     * used (`decision.hold.use(n)`); after a 2xx answer the gate settles that (all of `quantity` when
     * the handler said nothing), after any other answer or a throw it releases the hold. One such
     * need per route. Default `false`.
     */
    hold?: boolean | undefined;
  };
}

/**
 * Usage is tracked (`tracker.track`) once a 2xx answer was delivered (its body read to its end),
 * never for a failed request, a stream that errored or a client that left.
 */
export interface UsageNeed<Req = GateRequest> {
  /** The product and meter to record on, and the quantity. */
  usage: {
    /** The postpaid product's code. */
    product_code: string;
    /** The meter to record on. */
    meter_code: string;
    /** The quantity to record: a positive integer, or a function of the request that gives one. */
    quantity: GateQuantity<Req>;
  };
}

/** One thing a route needs. */
export type GateNeed<Req = GateRequest> =
  | SubscriptionNeed
  | EntitlementNeed
  | CreditsNeed<Req>
  | UsageNeed<Req>;

/**
 * What a route needs: one need, or several that must all hold (credits are debited last, only once
 * every other part held, so a "no" never costs credits).
 */
export type GateNeeds<Req = GateRequest> = GateNeed<Req> | readonly GateNeed<Req>[];

/** Where a "no" sends the customer: the signed hosted page of what would turn it into a "yes". */
export interface GatePaywall<Req = Request> {
  /** The payment gateway's signing key: the link's `u` token is signed with it (HS256). */
  signingKey: string;
  /**
   * The customer's e-mail, from the app's session: the service requires it to resolve a
   * subscription's tier page (and a `saas_only` product's).
   */
  email?: ((request: Req) => string | undefined | Promise<string | undefined>) | undefined;
  /**
   * The page that sells what a need without a target of its own asks for (an entitlement, credits):
   * a product or a subscription's tier. Without it (or when it answers `undefined`) such a "no" is a
   * 402 without a link, never a guess.
   */
  target?:
    | ((need: GateNeed<Req>, request: Req) => PaywallTarget | undefined | Promise<PaywallTarget | undefined>)
    | undefined;
  /** How long the link of one account and target is reused, in ms; default 60 000. */
  linkTtlMs?: number | undefined;
}

/** Options of {@link createGate}. */
export interface GateOptions<Req extends GateRequest = Request> {
  /** The client: debits and paywall links. */
  billing: BillingClient;
  /** `createAccessCache(billing, …)`: subscription and entitlement answers from memory. */
  access: AccessCache;
  /**
   * Who asks, from the app's own authentication (session, token): the `account_ref_id`, or
   * `undefined` for nobody (401). A throw fails the request as the framework fails a throwing
   * middleware: never allowed.
   */
  account: (request: Req) => string | undefined | Promise<string | undefined>;
  /** Where a "no" sends a browser, and the `upgrade_url` of an API client's 402. */
  paywall?: GatePaywall<Req> | undefined;
  /**
   * Billing unreachable and nothing usable cached: `'closed'` (default) answers 503 with
   * Retry-After; `'open'` lets the request through with `source: 'fallback'`. Never applies to
   * credits: a debit either happened or it did not.
   */
  onUnavailable?: 'closed' | 'open' | undefined;
  /**
   * `createCreditHolds(billing, …)`: reserves the `credits` needs with `hold: true`; required when a
   * need has one, or when a route has several credits needs. With it, every credits need of the gate
   * goes through its ledger: a plain one is reserved and settled at once (refused when what is
   * available is short), so the gate never debits what a hold reserved; a route's needs are all
   * reserved before any is debited, and a refusal gives every reservation back.
   */
  holds?: CreditHolds | undefined;
  /** The usage tracker that records `usage` needs; required when a need has one. */
  tracker?: UsageTracker | undefined;
  /**
   * Told when the tracker refused a `usage` need after the handler answered 2xx (closed, full, a
   * spool failure), or when the store failed to give back a hold (after the answer, or on a "no":
   * the hold then expires at its ttl): the answer stands. Not awaited; a throw is ignored.
   */
  onError?: ((error: unknown, request: Req) => void) | undefined;
  /**
   * For serverless functions and edge workers: the platform's `waitUntil` (`waitUntil` of
   * `@vercel/functions`, Next.js `after`), handed the work of a `usage` need after a 2xx answer and
   * passed on to `tracker.track`, so the usage is recorded before the platform freezes or drops the
   * process. A request's own context comes first where the gate sees one: `gate.protect` called as
   * `(request, env, ctx)` (Cloudflare Workers) or `(request, context)` (Netlify) with a
   * `waitUntil`, and `gate.hono` with `c.executionCtx`. With a `waitUntil`, `protect` and `hono`
   * answer without waiting for the event to be stored.
   */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
  /**
   * How a request's `Idempotency-Key` is honoured on a route with `credits`: see
   * {@link GateIdempotencyOptions}. The gate always honours it (in memory by default); this says
   * where the keys are kept and for how long.
   */
  idempotency?: GateIdempotencyOptions<Req> | undefined;
}

/** Where an allowed request's answer came from: memory, memory past its ttl, the service, or the fallback. */
export type GateSource = 'cache' | 'live' | 'stale' | 'fallback';

/** Why a request was refused. */
export type GateDenialReason =
  | 'unauthenticated'
  | 'inactive'
  | 'not_entitled'
  | 'insufficient_credits'
  | 'unavailable'
  /** The `Idempotency-Key` is too long or not printable ASCII (400). */
  | 'idempotency_key_invalid'
  /** A request with the same `Idempotency-Key` is still in flight (409). */
  | 'idempotency_key_in_flight'
  /** The `Idempotency-Key` was used by a request that completed (422). */
  | 'idempotency_key_used'
  /** The `Idempotency-Key` was used with another request: another route or body (422). */
  | 'idempotency_key_mismatch'
  /**
   * Not a refusal: the `Idempotency-Key`'s request completed, and `response` is its stored answer
   * sent again (`Idempotent-Replayed: true`; `idempotency.replay`). The handler must not run.
   */
  | 'idempotency_key_replayed';

/** The request may go on. */
export interface GateAllowed {
  /** Always `true` here: switch on it. */
  allowed: true;
  /** Who asked. */
  account_ref_id: string;
  /** Where the answer came from; `'fallback'` when billing was unreachable under `onUnavailable: 'open'`. */
  source: GateSource;
  /**
   * The debit of a `credits` need. With an `Idempotency-Key`, its `event_key` is derived from the
   * account, the route and the key (a retry is debited under the same one); without, a new one.
   */
  debit?: DebitApproved | undefined;
  /**
   * The claim of the request's `Idempotency-Key`, on a route with `credits`: the adapters mark it
   * after the answer; under `gate.check`, mark it yourself (`done()` or `failed()`).
   */
  idempotency?: GateIdempotency | undefined;
  /** The reservation of a `credits` need with `hold: true`: tell it what the request used. */
  hold?: GateHold | undefined;
}

/** A route's credit hold, as its handler sees it (`decision.hold`). */
export interface GateHold {
  /** Credits reserved: the most the route may debit. */
  readonly quantity: number;
  /** The key the settle debits under: derived from the request's `Idempotency-Key` when it had one (a retried request settles once). */
  readonly event_key: string;
  /**
   * Says how many credits the request used (an integer, 0 to `quantity`); the last call counts. The
   * gate settles it after a 2xx answer; without a call, all of `quantity`.
   *
   * @throws {@link InvalidRequestError} for a value outside 0 to `quantity`, and under `gate.check`,
   * which settles nothing (settle or release {@link GateHold.credit} yourself there).
   */
  use(used: number): void;
  /** The hold itself. Under `gate.check` no adapter settles it: settle or release it yourself. */
  readonly credit: CreditHold;
}

/**
 * The request was refused, or (`idempotency_key_replayed`) its key's stored answer is sent again:
 * either way the handler does not run; answer it with `response`.
 */
export interface GateDenied {
  /** Always `false` here: switch on it. */
  allowed: false;
  /** Why. */
  reason: GateDenialReason;
  /**
   * The status of `response`: 303 (a browser sent to the paywall), 400, 401, 402, 409, 422 or 503;
   * a replayed answer's own (`idempotency_key_replayed`).
   */
  status: number;
  /** The answer: a redirect to the paywall for a browser, else `application/problem+json`. */
  response: Response;
  /** Who asked, when known. */
  account_ref_id?: string | undefined;
}

/** What {@link Gate.check} decides. */
export type GateDecision = GateAllowed | GateDenied;

/** A Fetch handler: Next.js route handlers, Cloudflare Workers, Bun.serve, Deno.serve. */
export type FetchHandler<Req, A extends unknown[]> = (
  request: Req,
  ...rest: A
) => Response | Promise<Response>;

/** What Hono's middleware sees of its context (structural: the SDK imports no framework). */
export interface HonoContextLike {
  /** Hono's request; `raw` is the Fetch `Request`. */
  req: {
    /** The Fetch `Request`. */
    raw: Request;
  };
  /** Stores the decision for the handler: `c.get('billing')`. */
  set(key: 'billing', value: GateAllowed): void;
  /** The handler's response, once `next()` returned. */
  res: Response;
  /**
   * The runtime's execution context (Cloudflare Workers, Deno Deploy, Netlify): its `waitUntil`
   * keeps the usage of the route alive after the answer. Hono's getter throws where there is none.
   */
  readonly executionCtx?: {
    /** Keeps the isolate alive until `promise` settles. */
    waitUntil(promise: Promise<unknown>): void;
  };
}

/** What Fastify's `preHandler` sees of its reply (structural). */
export interface FastifyReplyLike {
  /** Sets the status. */
  code(status: number): FastifyReplyLike;
  /** Sets a header. */
  header(name: string, value: string): FastifyReplyLike;
  /** Sends the body. */
  send(body?: unknown): unknown;
  /** The status the handler answered with (read once the response was sent). */
  readonly statusCode: number;
  /** Node's response, to learn when the handler's answer is sent. */
  readonly raw: {
    /** Node's event once the response is sent (`finish`), or the connection closed (`close`). */
    once(event: 'finish' | 'close', listener: () => void): unknown;
    /** `true` once the connection closed (Node's `ServerResponse`). */
    readonly destroyed?: boolean | undefined;
  };
  /**
   * Takes the reply over from Fastify: used for a client gone while the gate decided, so that no
   * handler runs for nobody.
   */
  hijack?(): unknown;
}

/** What Express (and Connect, node:http) hands a middleware as its response (structural). */
export interface NodeResponseLike {
  /** Express's per-request locals: the decision goes to `res.locals.billing`. */
  locals?: Record<string, unknown>;
  /** The status the handler answered with. */
  statusCode: number;
  /** Writes the status line and headers. */
  writeHead(status: number, headers: Record<string, string>): unknown;
  /** Ends the response with a body. */
  end(body?: string): unknown;
  /** Learn when the handler's answer is sent (`finish`), or the connection closed (`close`, also without an answer). */
  once(event: 'finish' | 'close', listener: () => void): unknown;
  /** `true` once the connection closed (Node's `ServerResponse`): a client gone before the gate looked. */
  readonly destroyed?: boolean | undefined;
}

/** What `gate.hono(need)` gives: a Hono middleware. */
export type HonoMiddleware = (c: HonoContextLike, next: () => Promise<void>) => Promise<Response | undefined>;

/** What `gate.express(need)` gives: an Express / Connect / node:http middleware. */
export type NodeMiddleware<Req> = (req: Req, res: NodeResponseLike, next: (error?: unknown) => void) => void;

/** A route's gate: made by {@link createGate}, it decides and answers for any framework. */
export interface Gate<Req extends GateRequest = Request> {
  /**
   * Decides whether `request` may go on with `need`: who asks, subscription and entitlement from
   * the access cache, then credits (debited once per client request). A `usage` need is not
   * tracked here (only the adapters know the handler's answer).
   */
  check(request: Req, need: GateNeeds<Req>): Promise<GateDecision>;
  /**
   * Wraps a Fetch handler: a "no" is answered by the gate; a hold is settled and usage tracked once
   * a 2xx answer's body was read to its end (its stream wrapped for that), released when it errors
   * or is cancelled.
   * Called as `(request, env, ctx)` (Cloudflare Workers) or `(request, context)` (Netlify) with a
   * `waitUntil`, the usage is handed to it (else to the gate's `waitUntil` option) and the answer
   * does not wait for it.
   */
  protect<A extends unknown[]>(need: GateNeeds<Req>, handler: FetchHandler<Req, A>): FetchHandler<Req, A>;
  /**
   * Hono middleware: the decision at `c.get('billing')`. A 2xx body is wrapped as `protect`'s (and
   * put back in `c.res`); an OPTIONS request goes through undecided.
   */
  hono(need: GateNeeds<Req>): HonoMiddleware;
  /**
   * The route's handler behind the gate, as one Hono handler: the decision at `c.get('billing')`,
   * a "no" answered by the gate. The same as `gate.hono(need)` before `handler`, without Hono's
   * middleware chain (a route of one handler runs without it).
   *
   * @typeParam C - Hono's context as the handler types it (your app's `Context`).
   * @typeParam R - What the handler answers; the gate's "no" is a `Response` too.
   */
  hono<C extends HonoContextLike, R extends Response | Promise<Response>>(
    need: GateNeeds<Req>,
    handler: (c: C) => R,
  ): (c: C) => Promise<Awaited<R> | Response>;
  /**
   * Express / Connect / node:http middleware: the decision at `res.locals.billing`. An OPTIONS
   * request goes through undecided; a client gone while the gate decided has its hold released and
   * goes no further.
   */
  express(need: GateNeeds<Req>): NodeMiddleware<Req>;
  /**
   * The route's handler behind the gate, as one Express handler: the decision at
   * `res.locals.billing`, a "no" answered by the gate. The same as `gate.express(need)` before
   * `handler`, one layer fewer in Express's router. It returns a promise of what `handler` returns;
   * a throw or a rejection of `handler` goes to `next(error)`, as a throwing `account` does.
   *
   * @typeParam Res - Express's response as the handler types it (`express.Response`).
   * @typeParam Next - Express's `next` as the handler types it.
   */
  express<Res extends NodeResponseLike, Next extends (error?: unknown) => void>(
    need: GateNeeds<Req>,
    handler: (req: Req, res: Res, next: Next) => unknown,
  ): (req: Req, res: Res, next: Next) => unknown;
  /**
   * The decision `protect` made for `request`, for a Fetch handler that wants the account, the
   * source, the debit or the hold (to `use` what it spent); `undefined` for a request `protect` did not allow. (Hono's handlers read
   * `c.get('billing')`, Express's `res.locals.billing`, Fastify's `request.billing`.)
   */
  decisionOf(request: Req): GateAllowed | undefined;
  /**
   * A Fastify `preHandler`: the decision at `request.billing`. An OPTIONS request goes through
   * undecided; a client gone while the gate decided has its hold released and no handler runs.
   */
  fastify(need: GateNeeds<Req>): (request: Req, reply: FastifyReplyLike) => Promise<unknown>;
  /**
   * The endpoint a browser reads its own billing state from (`billing-sdk/view`'s
   * `createAccountView`): the account of the request (your `account`, as every route), never one
   * the request names. A GET answers its {@link AccountState} as JSON (`Cache-Control: private,
   * no-store`), from the access cache when it holds the answers; with `Accept: text/event-stream`,
   * a stream: the state at once, then a new one whenever it changes (an invalidation in any
   * instance through the access cache's shared store, the webhook handlers'; a debit or a hold
   * settled through this gate or the gate's client's credit holds in this process). No account: 401
   * as a route answers it. The service down with nothing cached: 503 with Retry-After, the failure
   * told to `onError`, never a made-up state. Beyond a stream limit: 429.
   *
   * @param view - What the page shows: see {@link AccountStateView}.
   * @throws {@link InvalidRequestError} naming each bad field of `view`.
   * @example
   * ```ts
   * import express from 'express';
   * import { BillingClient, createAccessCache, createGate } from 'billing-sdk';
   *
   * const billing = new BillingClient();
   * const gate = createGate<express.Request>({
   *   billing,
   *   access: createAccessCache(billing),
   *   account: (req) => req.get('x-account-id'),
   * });
   * const state = gate.state({
   *   features: { export: { product_code: 'ai-assistant', entitlement_code: 'export' } },
   *   credits: [{ product_code: 'ai-assistant', meter_code: 'credits' }],
   * });
   * const app = express();
   * app.get('/billing/state', state.express);
   * ```
   */
  state(view: AccountStateView): AccountStateHandler<Req>;
}
