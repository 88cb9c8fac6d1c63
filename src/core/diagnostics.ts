/**
 * What the SDK publishes on `diagnostics_channel` (Node, Deno, Bun, and workerd with
 * `nodejs_compat`; nothing in browsers). Subscribe with `node:diagnostics_channel`:
 *
 * - `tracingChannel('billing-sdk:request')`: one trace per call (per page of a list), its context a
 *   {@link RequestTrace}. Its `start`, `end`, `asyncStart`, `asyncEnd` and `error` events follow
 *   Node's TracingChannel contract.
 * - `tracingChannel('billing-sdk:attempt')`: one trace per attempt of a call, its context an
 *   {@link AttemptTrace}: retries show as further attempts.
 * - `channel('billing-sdk:access')`: the access cache's {@link AccessEvent}s, and a gate's
 *   {@link GateEvent} per decision.
 * - `channel('billing-sdk:tracker')`: the usage tracker's {@link TrackerEvent}s.
 *
 * Nothing is built or published while a channel has no subscriber. No message holds an id, a key,
 * an e-mail or a query value: `route` is the path template. A subscriber that throws does not
 * change the call's result (Node reports its error as an uncaught exception, as it does for every
 * channel).
 *
 * @module
 */

/** The context of one call on the `billing-sdk:request` tracing channel; filled in as the call goes. */
export interface RequestTrace {
  /** The SDK method: `invoices.list`. */
  readonly operation: string;
  /** The HTTP method. */
  readonly method: 'GET' | 'POST';
  /** The path template from the host: `/api/account/{account_ref_id}/status/`. Never an id. */
  readonly route: string;
  /** The API's host name or IP address, without brackets (OpenTelemetry's `server.address`). */
  readonly serverAddress: string;
  /** The API's port, the scheme's default when the base URL names none. */
  readonly serverPort: number;
  /** Attempts started so far: 0 at `start`, 1 once the first is sent, 2 after a retry, … */
  attempt: number;
  /** The last attempt's HTTP status, once there was one. */
  status?: number | undefined;
  /** The last response's request id (`x-request-id`), once there was one. */
  requestId?: string | undefined;
  /** The wait the server asked for (Retry-After) in the last response, in ms. */
  retryAfterMs?: number | undefined;
  /** Set by the tracing channel when the call fails: the `BillingError` the caller gets. */
  error?: unknown;
  /** Set by the tracing channel when the call succeeds: `{ data, response }`. */
  result?: unknown;
}

/** The context of one attempt on the `billing-sdk:attempt` tracing channel. */
export interface AttemptTrace {
  /** The call this attempt belongs to. */
  readonly request: RequestTrace;
  /** The call's SDK method, as on {@link RequestTrace.operation}. */
  readonly operation: string;
  /** The HTTP method. */
  readonly method: 'GET' | 'POST';
  /** The call's path template, as on {@link RequestTrace.route}. */
  readonly route: string;
  /** 1 for the first attempt, 2 for the first retry, … */
  readonly attempt: number;
  /** The HTTP status of this attempt's response, when there was one. */
  status?: number | undefined;
  /** This attempt's response's request id (`x-request-id`), when there was one. */
  requestId?: string | undefined;
  /** The wait this attempt's response asked for (Retry-After), in ms. */
  retryAfterMs?: number | undefined;
  /** Set by the tracing channel when the attempt fails. */
  error?: unknown;
  /** Set by the tracing channel when the attempt succeeds. */
  result?: unknown;
}

/** What the access cache publishes on `billing-sdk:access`. */
export interface AccessEvent {
  /**
   * `hit`: answered from memory (or the shared store) within its ttl; `stale`: answered with an
   * old answer while a refresh runs; `miss`: the lookup waits for the API; `refresh`: a request to
   * the API started; `invalidate`: an account was invalidated; `error`: a refresh or the store
   * failed (the lookup may still have been answered).
   */
  readonly event: 'hit' | 'miss' | 'stale' | 'refresh' | 'invalidate' | 'error';
  /** What was looked up: `accounts.status` or `entitlements.check`; absent for `invalidate`. */
  readonly operation?: 'accounts.status' | 'entitlements.check' | undefined;
}

/**
 * What a gate (`createGate`) publishes on `billing-sdk:access` for each decision: never the account,
 * a key or a value of the request.
 */
export interface GateEvent {
  /** Always `'decision'`: one per request the gate decided. */
  readonly event: 'decision';
  /** Whether the request may go on. */
  readonly allowed: boolean;
  /** Why not, when refused. */
  readonly reason?:
    | 'unauthenticated'
    | 'inactive'
    | 'not_entitled'
    | 'insufficient_credits'
    | 'unavailable'
    | undefined;
  /** Where the answer came from, when allowed. */
  readonly source?: 'cache' | 'live' | 'stale' | 'fallback' | undefined;
  /** The kinds of need the route has. */
  readonly needs: ('subscription' | 'entitlement' | 'credits' | 'usage')[];
}

/**
 * What credit holds (`createCreditHolds`) publish on `billing-sdk:credits`: never the account, a key
 * or an id.
 */
export interface CreditsEvent {
  /**
   * `reserve`: a hold was granted; `refuse`: a reservation was refused (`insufficient_credits`);
   * `settle`: a hold was settled (`debited`, 0 for a settle of 0); `unpaid`: the service refused a
   * settle's debit (`quantity`: what was used); `release`: a hold was released;
   * `expire`: holds of any instance were found expired (`count`); `balance`: a balance was read from
   * the service; `error`: the store failed after a debit (the hold stays until its ttl).
   */
  readonly event: 'reserve' | 'refuse' | 'settle' | 'unpaid' | 'release' | 'expire' | 'balance' | 'error';
  /** Credits reserved (`reserve`), asked (`refuse`), debited (`settle`) or used and unpaid (`unpaid`). */
  readonly quantity?: number | undefined;
  /** How many holds expired (`expire`). */
  readonly count?: number | undefined;
}

/** What the usage tracker publishes on `billing-sdk:tracker`. */
export interface TrackerEvent {
  /**
   * `queued`: an event was appended to the spool; `sent`: the API recorded one; `retry`: a send
   * failed and will be retried; `dead-letter`: the API refused one for good.
   */
  readonly event: 'queued' | 'sent' | 'retry' | 'dead-letter';
  /** Events waiting to be sent after this step (the queue depth), not counting those in flight. */
  readonly queued: number;
  /** Events being sent now. */
  readonly inFlight: number;
}

/**
 * What the AI meter (`billing-sdk/ai`) publishes on `billing-sdk:ai`, once per call it charged or
 * let go: never the account, a key, the prompt or the output.
 */
export interface AIEvent {
  /** Always `charge`: a call ended and was charged `cost` (0: nothing was sent). */
  readonly event: 'charge';
  /** The way in: `openai`, `anthropic` or `ai-sdk`. */
  readonly provider: string;
  /** The model. */
  readonly model: string;
  /** The tokens charged for: totals (`input` counts the cached ones, `output` the reasoning ones). */
  readonly usage: {
    /** Every input token, cached ones included. */
    readonly input: number;
    /** Every output token, reasoning ones included. */
    readonly output: number;
    /** Of `input`, read from the prompt cache. */
    readonly cachedInput: number;
    /** Of `input`, written to the prompt cache. */
    readonly cacheWrite: number;
    /** Of `output`, reasoning tokens. */
    readonly reasoning: number;
  };
  /** The units charged. */
  readonly cost: number;
  /** `track`, `debit`, `hold`, or `gate` (charged against a gated route's hold). */
  readonly mode: 'track' | 'debit' | 'hold' | 'gate';
  /** True when the usage was estimated from the text delivered (a stream cancelled before its usage came). */
  readonly estimated: boolean;
  /** How the call ended: `completed` (the provider's end, a length stop included), `cancelled` by the consumer, or `failed`. */
  readonly ended: 'completed' | 'cancelled' | 'failed';
}
