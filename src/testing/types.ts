import type { MockFaults } from './faults.js';
import type { MockLifecycle } from './lifecycle/lifecycle.js';
import type { RecordedRequests } from './requests.js';
import type { SeedName } from './seed.js';
import type { MockStore } from './store.js';
import type { MockWebhookRetry } from './webhooks/deliver.js';
import type { MockWebhooks } from './webhooks/registry.js';

/** Options shared by {@link createMockApp} and {@link startMockServer}. */
export interface MockOptions {
  /** Initial data; `'demo'` (default) or `'empty'` (catalog only, no accounts). */
  seed?: SeedName | undefined;
  /** The only API key accepted; default `'mock-api-key-demo'`. */
  apiKey?: string | undefined;
  /** Secret that hosted-page tokens must be signed with (HS256); default `'mock-signing-key-demo'`. */
  signingKey?: string | undefined;
  /**
   * Origin of hosted pages and invoice links. By default the origin of each request, so the mock
   * works under whatever host name or in-process origin the client uses.
   */
  appUrl?: string | undefined;
  /**
   * Answer CORS preflights and add `Access-Control-Allow-Origin: *` to every response, for browser
   * tests served from another loopback origin. Default false.
   */
  cors?: boolean | undefined;
  /**
   * HTTP statuses carrying refusal bodies (`approved: false` / `accepted: false`). The reference
   * does not document them, so SDK tests can vary them to prove that refusals are read as results
   * whatever the status.
   */
  refusalStatus?: {
    /** Debit refused for lack of credits; default 402. */
    insufficientCredits?: number | undefined;
    /** Debit or event for a product/meter with the wrong usage model; default 422. */
    invalidUsageModel?: number | undefined;
  };
  /**
   * Receiver of lifecycle webhooks from the start (and again after `reset()`), e.g. a local
   * handler's URL; same as calling `webhooks.register(url)`.
   */
  webhookUrl?: string | undefined;
  /**
   * How a webhook the receiver does not acknowledge is retried. The reference does not document
   * the schedule; defaults are short so that tests stay fast: 5 tries, 50 ms doubling, 5 s each.
   */
  webhookRetry?: MockWebhookRetry | undefined;
  /**
   * Numbers in [0, 1) deciding whether a fault with `probability` < 1 fires; default
   * `Math.random`. Pass `seededRandom(seed)` for a soak that makes the same choices on every run
   * (draws happen in request order, so run the requests one at a time for the exact sequence).
   * `reset()` does not rewind it.
   */
  random?: (() => number) | undefined;
}

/** A fetch-compatible function; accepts what `globalThis.fetch` accepts. */
export type MockFetch = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

/** An in-process mock: the API as a fetch function, plus handles on its state. */
export interface MockApp {
  /**
   * Handles a request as the server would, without a socket. Bound, so it can be passed as a
   * client's `fetch` option directly. As the platform fetch does: connection resets reject with
   * `TypeError('fetch failed')`; an aborted signal rejects with the signal's reason (and errors a
   * stalled body being read); gzip and deflate bodies are decoded, headers kept.
   */
  fetch: MockFetch;
  /** The mock's data: read it to assert, or change it to set up a case. */
  store: MockStore;
  /** Injected failures (errors, delays, resets, stalls) for the next matching requests. */
  faults: MockFaults;
  /** Log of every `/api/` request received. */
  requests: RecordedRequests;
  /** The only API key accepted (`options.apiKey`, default `'mock-api-key-demo'`). */
  apiKey: string;
  /**
   * Secret that hosted-link tokens are verified with (`options.signingKey`, default
   * `'mock-signing-key-demo'`).
   */
  signingKey: string;
  /** Where lifecycle webhooks go, and what was delivered. */
  webhooks: MockWebhooks;
  /** Simulated processor events: change the account, then post the webhook. */
  lifecycle: MockLifecycle;
  /**
   * A clean slate between tests: restores the seed, clears faults and the request log, abandons
   * webhook deliveries under way, empties the delivery log and registers `options.webhookUrl`
   * again (or none).
   */
  reset(): void;
}

/** Options of {@link startMockServer}. */
export interface MockServerOptions extends MockOptions {
  /** TCP port; default 0 (an ephemeral port, so test files can run in parallel). */
  port?: number | undefined;
  /**
   * Address or host name to listen on; default `'127.0.0.1'` (loopback only). `'0.0.0.0'` or
   * `'::'` listens on every interface (e.g. inside a container); the URLs then name loopback.
   */
  host?: string | undefined;
}

/** A running mock server (on loopback unless `options.host` says otherwise). */
export interface MockServer {
  /** API root, `http://127.0.0.1:<port>/api/` (with `options.host` in place of 127.0.0.1). */
  baseUrl: string;
  /** Host of hosted pages, `http://127.0.0.1:<port>` (or `options.appUrl`). */
  appUrl: string;
  /** The only API key accepted (`options.apiKey`, default `'mock-api-key-demo'`). */
  apiKey: string;
  /**
   * Secret that hosted-link tokens are verified with (`options.signingKey`, default
   * `'mock-signing-key-demo'`).
   */
  signingKey: string;
  /** The mock's data: read it to assert, or change it to set up a case. */
  store: MockStore;
  /** Injected failures (errors, delays, resets, stalls) for the next matching requests. */
  faults: MockFaults;
  /** Log of every `/api/` request received. */
  requests: RecordedRequests;
  /** Where lifecycle webhooks go, and what was delivered. */
  webhooks: MockWebhooks;
  /** Simulated processor events: change the account, then post the webhook. */
  lifecycle: MockLifecycle;
  /** As {@link MockApp.reset}: seed, faults, request log, webhook registration and log. */
  reset(): void;
  /**
   * How many TCP connections to the server are open right now (accepted and not yet closed or
   * destroyed by either side), idle keep-alive ones included; 0 after `close()`. A close takes a
   * moment to reach the server, so poll briefly (every 10 ms for up to 2 s) rather than assert
   * at once. Exact with a client whose pool you control (a `node:http` Agent, an undici Agent you
   * can `destroy()`); Node's global fetch keeps idle sockets for about 4 s and may open a spare
   * one after an abort, so with it assert on {@link MockServer.activeRequests} instead.
   */
  openConnections(): number;
  /**
   * How many requests are being answered right now: received, and their answer neither fully
   * written nor dropped (a delay under way, a stalled body, a large body the client is not
   * reading). 0 once every client has read or cancelled its bodies; a client that abandons a
   * stalled or unread body without cancelling it leaves this above 0. Poll briefly, as for
   * {@link MockServer.openConnections}.
   */
  activeRequests(): number;
  /**
   * Stops listening and drops open (keep-alive) connections, stalled answers included; resolves
   * once closed. Webhook deliveries under way are abandoned, so no retry outlives the server.
   * Calling it again returns the same promise.
   */
  close(): Promise<void>;
}
