/** What a paywall link leads to: a product, or a subscription's tier (`resolve.publicUrl`). */
export type PaywallTarget =
  | {
      /** A product's label name (a one-time sale, a credits pack). */
      product_name: string;
    }
  | {
      /** A subscription product's label name. */
      subscription_name: string;
      /** The tier's label name. */
      tier_name: string;
    };

/**
 * What the browser may see of its own account, as {@link Gate.state} describes it: the front end's
 * own names for the entitlements it shows, the credits meters, and the page an upgrade goes to.
 * Checked when `gate.state(view)` is called: a bad name fails at start-up.
 */
export interface AccountStateView {
  /**
   * The entitlements the page shows, by the page's own name for each (`export`, `sso`): the
   * state's `features` has a boolean under each name.
   */
  features?: Readonly<Record<string, AccountStateFeature>> | undefined;
  /** The prepaid-credits meters whose balances the state carries (`credits[product_code][meter_code]`). */
  credits?: readonly AccountStateMeter[] | undefined;
  /**
   * The page an upgrade goes to (a product, or a subscription's tier), as the gate's `paywall.target`
   * answers it: the state's `paywall_url` is its signed link for the account, made with the gate's
   * `paywall` option (which it then requires).
   */
  paywall?: PaywallTarget | undefined;
  /** Limits and timings of the live streams (`Accept: text/event-stream`). */
  streams?: AccountStateStreamOptions | undefined;
}

/** An entitlement the page shows, as `entitlements.check` names it. */
export interface AccountStateFeature {
  /** The product's code. */
  product_code: string;
  /** The entitlement's code. */
  entitlement_code: string;
}

/** A prepaid-credits meter whose balance the page shows. */
export interface AccountStateMeter {
  /** The prepaid-credits product's code. */
  product_code: string;
  /** The meter's code. */
  meter_code: string;
}

/** Limits and timings of `gate.state`'s live streams. */
export interface AccountStateStreamOptions {
  /** Open streams one account may hold (its tabs); one more is answered 429. Default 20. */
  perAccount?: number | undefined;
  /** Open streams this handler holds in all; one more is answered 429. Default 1 000. */
  total?: number | undefined;
  /**
   * How often an idle stream sends a comment line, in ms, so that proxies and load balancers do not
   * close it as idle. Default 15 000.
   */
  heartbeatMs?: number | undefined;
  /**
   * How long a balance read for a state is reused, in ms; an approved debit on the gate's client in
   * this process (the app's own `usage.debit`, the gate's, credit holds', the AI meter's) or an
   * invalidation of the account drops it at once. Default 30 000.
   */
  balanceTtlMs?: number | undefined;
}

/**
 * The billing state of the request's own account: what `gate.state`'s handler answers (JSON), or
 * sends as each `state` event of its stream. It never holds a key, nor another account's data.
 */
export interface AccountState {
  /** The account, as the app's `account(request)` named it. */
  account_ref_id: string;
  /** Whether the account has an active subscription (`false` for an account the service does not know). */
  active: boolean;
  /** The `label_name` of the first active subscription's tier; `null` when none is active. */
  tier: string | null;
  /** Each of the view's `features`: whether the account has that entitlement. */
  features: Record<string, boolean>;
  /** Each of the view's `credits` meters: its balance, as `credits[product_code][meter_code]`. */
  credits: Record<string, Record<string, number>>;
  /** The signed link of the view's `paywall` for this account, when the view names one and it resolved. */
  paywall_url?: string | undefined;
  /** When this instance read the state: an ISO 8601 UTC string. */
  updated_at: string;
}

/** What the handler of {@link Gate.state} holds now. */
export interface AccountStateStats {
  /** Streams open now. */
  streams: number;
  /** Accounts with at least one open stream. */
  accounts: number;
}

/**
 * `gate.state(view)`: one endpoint in each form the gate has. A GET answers the request's own
 * account's {@link AccountState} as JSON; with `Accept: text/event-stream`, a stream of it (the
 * state at once, then each change).
 *
 * @typeParam Req - The request type of the gate.
 */
export interface AccountStateHandler<Req> {
  /**
   * A Fetch handler (Next.js route handlers, Cloudflare Workers, Bun, Deno): its stream ends when
   * `request.signal` aborts or the client cancels the body.
   */
  fetch(request: Req, ...rest: unknown[]): Promise<Response>;
  /** An Express / Connect / node:http handler; a stream ends when the connection closes. */
  express(req: Req, res: StateNodeResponse, next: (error?: unknown) => void): Promise<void>;
  /** A Fastify handler (`app.get(path, handler)`); a stream ends when the connection closes. */
  fastify(request: Req, reply: StateFastifyReply): Promise<unknown>;
  /** A Hono handler (`app.get(path, handler)`): the stream ends when the request's signal aborts. */
  hono(c: {
    /** Hono's request; `raw` is the Fetch `Request`. */
    req: {
      /** The Fetch `Request`. */
      raw: Request;
    };
  }): Promise<Response>;
  /** Ends every open stream and stops listening; later requests are answered 503. */
  close(): Promise<void>;
  /** Streams open now, for metrics and tests. */
  stats(): AccountStateStats;
}

/** What the state handler writes to of Node's response (Express, Connect, node:http; Fastify's `reply.raw`). */
export interface StateNodeResponse {
  /** Writes the status line and headers. */
  writeHead(status: number, headers: Record<string, string>): unknown;
  /** Writes a chunk of the body (a stream's event). */
  write(chunk: Uint8Array): unknown;
  /** Ends the response. */
  end(body?: string): unknown;
  /**
   * Node's `close` event (the connection closed: the stream ends) and `drain` event (a full write
   * buffer emptied: the stream goes on).
   */
  once(event: 'close' | 'drain', listener: () => void): unknown;
}

/** What the state handler uses of Fastify's reply (structural). */
export interface StateFastifyReply {
  /** Sets the status. */
  code(status: number): unknown;
  /** Sets a header. */
  header(name: string, value: string): unknown;
  /** Sends the body. */
  send(body?: unknown): unknown;
  /** Node's response, which a stream is written to. */
  readonly raw: StateNodeResponse;
  /** Takes the reply over from Fastify (a stream is written to `raw` by the handler). */
  hijack?(): unknown;
}
