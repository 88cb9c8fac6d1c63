import { isBrowserWindow, readEnv } from './env.js';
import { BillingError } from './errors.js';
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
  apiKey?: string;
  /** API root, ending in `/api/` (a missing trailing slash is added). Default: env `BILLING_BASE_URL`. */
  baseUrl?: string;
  /** `'authorization'` sends `Authorization: Bearer <key>` (default); `'x-api-key'` sends `X-API-Key: <key>`. */
  authHeader?: AuthHeader;
  /** Milliseconds allowed for each attempt, body included. Default 30 000. */
  timeout?: number;
  /** Retries after the first attempt, for requests that are safe to retry. Default 2. */
  maxRetries?: number;
  /** Longest Retry-After honoured, in ms; a longer one throws {@link RateLimitError} at once. Default 60 000. */
  maxRetryDelay?: number;
  /** Custom fetch. Default `globalThis.fetch`. */
  fetch?: FetchLike;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** Where log lines go. Default `console`. Secrets are removed before they reach it. */
  logger?: Logger;
  /** How much to log. Default env `BILLING_LOG`, else `'warn'`. */
  logLevel?: LogLevel;
  /** Response validation. Default `'strict'`. */
  validation?: ValidationMode;
  /** Allow construction in a browser window, where the API key is visible to every user of the page. */
  dangerouslyAllowBrowser?: boolean;
  /** Allow `http:` to a host that is not loopback (the key would travel in clear). Default false. */
  allowInsecureHttp?: boolean;
}

/** Per-call options, the last argument of every method. */
export interface RequestOptions {
  /** Cancels the call, including any wait between retries. */
  signal?: AbortSignal;
  /** Milliseconds allowed for each attempt of this call. */
  timeout?: number;
  /** Retries for this call. */
  maxRetries?: number;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

/** Options after defaults, env and checks: computed once per client. */
export interface ResolvedOptions {
  apiKey: string;
  baseUrl: string;
  /** Pathname of the base URL, for error messages: `/api/`. */
  basePath: string;
  authHeader: AuthHeader;
  timeout: number;
  maxRetries: number;
  maxRetryDelay: number;
  fetch: FetchLike | undefined;
  headers: Record<string, string>;
  logger: Logger;
  logLevel: LogLevel;
  validation: ValidationMode;
}

const logLevels: readonly LogLevel[] = ['off', 'error', 'warn', 'info', 'debug'];

/** Applies defaults and env, and refuses what cannot work or would be unsafe. */
export function resolveOptions(options: ClientOptions): ResolvedOptions {
  const apiKey = options.apiKey ?? readEnv('BILLING_API_KEY');
  if (!apiKey) {
    throw new BillingError(
      'Missing API key: pass `apiKey` to new BillingClient() or set the BILLING_API_KEY environment variable.',
    );
  }
  if (isBrowserWindow() && !options.dangerouslyAllowBrowser) {
    throw new BillingError(
      'BillingClient was constructed with an API key in a browser window, where every user of the page can read it. ' +
        'Call the API from your server, or pass `dangerouslyAllowBrowser: true` if you accept the risk.',
    );
  }
  const rawBase = options.baseUrl ?? readEnv('BILLING_BASE_URL');
  if (!rawBase) {
    throw new BillingError(
      'Missing base URL: pass `baseUrl` (the API root, ending in /api/) to new BillingClient() or set the BILLING_BASE_URL environment variable.',
    );
  }
  const base = normaliseBaseUrl(rawBase, options.allowInsecureHttp ?? false);
  const envLevel = readEnv('BILLING_LOG') as LogLevel | undefined;
  return {
    apiKey,
    baseUrl: base.href,
    basePath: base.pathname,
    authHeader: options.authHeader ?? 'authorization',
    timeout: nonNegative('timeout', options.timeout, 30_000),
    maxRetries: nonNegative('maxRetries', options.maxRetries, 2),
    maxRetryDelay: nonNegative('maxRetryDelay', options.maxRetryDelay, 60_000),
    fetch: options.fetch,
    headers: { ...options.headers },
    logger: options.logger ?? console,
    logLevel: options.logLevel ?? (envLevel && logLevels.includes(envLevel) ? envLevel : 'warn'),
    validation: options.validation ?? 'strict',
  };
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new BillingError(`\`${name}\` must be a number >= 0, got ${String(value)}.`);
  }
  return value;
}

function normaliseBaseUrl(raw: string, allowInsecureHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BillingError(`\`baseUrl\` is not an absolute URL: ${JSON.stringify(raw)}.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new BillingError(`\`baseUrl\` must use https: (got ${url.protocol}).`);
  }
  if (url.username || url.password) {
    throw new BillingError('`baseUrl` must not contain credentials: pass the key as `apiKey`.');
  }
  if (url.protocol === 'http:' && !allowInsecureHttp && !isLoopback(url.hostname)) {
    throw new BillingError(
      `\`baseUrl\` uses http: to ${url.hostname}, so the API key would travel unencrypted. ` +
        'Use https:, or pass `allowInsecureHttp: true` for a trusted network.',
    );
  }
  url.search = '';
  url.hash = '';
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    hostname === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}
