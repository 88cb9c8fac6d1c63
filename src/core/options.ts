import type { Dispatcher } from 'undici';
import type { Cooldown } from './cooldown.js';
import type { Logger, LogLevel } from './logger.js';

/** What to do when a response does not match its schema. */
export type ValidationMode = 'strict' | 'warn' | 'off';

/** Which header carries the API key. */
export type AuthHeader = 'authorization' | 'x-api-key';

/** A `fetch` function: the global one, undici's, a test double, a proxying wrapper. */
export type FetchLike = (input: Request, init?: RequestInit) => Promise<Response>;

/** Options of {@link BillingClient}. Every one is optional where the environment supplies it. */
export interface ClientOptions {
  /** API key of the payment gateway (sandbox or live). Default: env `BILLING_API_KEY`. */
  apiKey?: string | undefined;
  /** API root, ending in `/api/` (a missing trailing slash is added). Default: env `BILLING_BASE_URL`. */
  baseUrl?: string | undefined;
  /** `'authorization'` sends `Authorization: Bearer <key>` (default); `'x-api-key'` sends `X-API-Key: <key>`. */
  authHeader?: AuthHeader | undefined;
  /**
   * Milliseconds allowed for each attempt, from sending to the last byte of the body. Default 30 000.
   * `Infinity` (or anything above 2^31-1 ms, about 24.8 days) means no limit.
   */
  timeout?: number | undefined;
  /** Retries after the first attempt, for requests that are safe to retry. Default 2. */
  maxRetries?: number | undefined;
  /**
   * Longest wait the server may ask for (Retry-After), in ms; a longer one throws {@link RateLimitError}
   * (or the 5xx error) at once, with `retryAfterMs`. Does not limit the SDK's own backoff. Default 60 000.
   */
  maxRetryDelay?: number | undefined;
  /**
   * Milliseconds to wait before retry number `retry` (1, 2, …) when the server asked for no wait.
   * Default: about 0.5 s doubling to 8 s, with jitter. A server's Retry-After always wins. In tests,
   * `retryDelay: () => 0` makes retries instant.
   */
  retryDelay?: ((retry: number) => number) | undefined;
  /** Largest response body read, in bytes after decompression; a larger one fails with {@link ResponseTooLargeError}. Default 4 MiB. */
  maxResponseBytes?: number | undefined;
  /**
   * Custom fetch, the engine under ky. Default: in Node, the SDK's engine on undici's dispatcher
   * API (see `dispatcher`); in Deno, Bun, browsers and workers, `globalThis.fetch`.
   */
  fetch?: FetchLike | undefined;
  /**
   * Node only (ignored elsewhere): the undici dispatcher requests go through when no `fetch` is
   * given, e.g. `new Agent({ connections: 16, keepAliveTimeout: 10_000 })`, a `ProxyAgent`, or
   * `getGlobalDispatcher()` to share Node's global one. Default: one undici `Agent` shared by every
   * client in the process, with undici's defaults (those of Node's fetch): no limit on connections
   * per origin, idle sockets kept 4 s; when `HTTPS_PROXY`/`HTTP_PROXY` is set (read once, on the
   * first request), undici's `EnvHttpProxyAgent` instead, honouring `NO_PROXY`. Cannot be combined
   * with `fetch`.
   */
  dispatcher?: Dispatcher | undefined;
  /** Headers sent with every request. Per-call headers override them; neither can override the credentials. */
  headers?: Record<string, string> | undefined;
  /** Where log lines go. Default `console`. Secrets are removed before they reach it, and a logger that throws is ignored. */
  logger?: Logger | undefined;
  /** How much to log. Default env `BILLING_LOG`, else `'warn'`. */
  logLevel?: LogLevel | undefined;
  /** Response validation. Default `'strict'`. */
  validation?: ValidationMode | undefined;
  /** Allow construction in a browser window, where the API key is visible to every user of the page. */
  dangerouslyAllowBrowser?: boolean | undefined;
  /** Allow `http:` to a host that is not loopback (the key would travel in clear). Default false. */
  allowInsecureHttp?: boolean | undefined;
  /**
   * The cooldown after a 429 with Retry-After, shared by every request of this client (its own by
   * default, and shared with clients made by `withOptions`). Pass one {@link memoryCooldown} to
   * several clients to share it between them, or `redisCooldown` (`billing-sdk/redis`) to share it
   * between processes.
   */
  cooldown?: Cooldown | undefined;
}

/** Per-call options, the last argument of every method. Checked like the client's options. */
export interface RequestOptions {
  /** Cancels the call, including any wait between retries. */
  signal?: AbortSignal | undefined;
  /** Milliseconds allowed for each attempt of this call, body included. */
  timeout?: number | undefined;
  /** Retries for this call. */
  maxRetries?: number | undefined;
  /** Extra headers for this call. */
  headers?: Record<string, string> | undefined;
}
