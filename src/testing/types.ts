import type { MockFaults } from './faults.js';
import type { RecordedRequests } from './requests.js';
import type { SeedName } from './seed.js';
import type { MockStore } from './store.js';

/** Options shared by {@link createMockApp} and {@link startMockServer}. */
export interface MockOptions {
  /** Initial data; `'demo'` (default) or `'empty'` (catalog only, no accounts). */
  seed?: SeedName;
  /** The only API key accepted; default `'mock-api-key-demo'`. */
  apiKey?: string;
  /** Secret that hosted-page tokens must be signed with (HS256); default `'mock-signing-key-demo'`. */
  signingKey?: string;
  /**
   * Origin of hosted pages and invoice links. By default the origin of each request, so the mock
   * works under whatever host name or in-process origin the client uses.
   */
  appUrl?: string;
  /**
   * Answer CORS preflights and add `Access-Control-Allow-Origin: *` to every response, for browser
   * tests served from another loopback origin. Default false.
   */
  cors?: boolean;
  /**
   * HTTP statuses carrying refusal bodies (`approved: false` / `accepted: false`). The reference
   * does not document them, so SDK tests can vary them to prove that refusals are read as results
   * whatever the status.
   */
  refusalStatus?: {
    /** Debit refused for lack of credits; default 402. */
    insufficientCredits?: number;
    /** Debit or event for a product/meter with the wrong usage model; default 422. */
    invalidUsageModel?: number;
  };
}

/** A fetch-compatible function; accepts what `globalThis.fetch` accepts. */
export type MockFetch = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

/** An in-process mock: the API as a fetch function, plus handles on its state. */
export interface MockApp {
  /**
   * Handles a request as the server would, without a socket. Bound, so it can be passed as a
   * client's `fetch` option directly. Connection resets reject with `TypeError('fetch failed')`;
   * an aborted signal rejects with the signal's reason, as the real fetch does.
   */
  fetch: MockFetch;
  store: MockStore;
  faults: MockFaults;
  requests: RecordedRequests;
  apiKey: string;
  signingKey: string;
  /** Restores the seed, clears faults and the request log: a clean slate between tests. */
  reset(): void;
}

/** Options of {@link startMockServer}. */
export interface MockServerOptions extends MockOptions {
  /** TCP port on 127.0.0.1; default 0 (an ephemeral port, so test files can run in parallel). */
  port?: number;
}

/** A running mock server on loopback. */
export interface MockServer {
  /** API root, `http://127.0.0.1:<port>/api/`. */
  baseUrl: string;
  /** Host of hosted pages, `http://127.0.0.1:<port>` (or `options.appUrl`). */
  appUrl: string;
  apiKey: string;
  signingKey: string;
  store: MockStore;
  faults: MockFaults;
  requests: RecordedRequests;
  /** Restores the seed, clears faults and the request log. */
  reset(): void;
  /** Stops listening and drops open (keep-alive) connections; resolves once closed. */
  close(): Promise<void>;
}
