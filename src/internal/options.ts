import type { Dispatcher } from 'undici';
import type { Cooldown } from '../core/cooldown.js';
import { InvalidRequestError } from '../core/errors/index.js';
import type { Logger, LogLevel } from '../core/logger.js';
import type {
  AuthHeader,
  ClientOptions,
  FetchLike,
  RequestOptions,
  ValidationMode,
} from '../core/options.js';
import { type Clock, clockOf } from '../util/clock.js';
import { isBrowserWindow, readEnv } from '../util/env.js';
import { anySignal } from '../util/signals.js';
import {
  abortSignal,
  boolean,
  check,
  func,
  integer,
  nonNegative,
  oneOf,
  positive,
  type Rule,
  text,
} from './checks.js';
import { headerIssues, isValidApiKey } from './headers.js';

/** Options after defaults, env and checks: computed once per client. */
export interface ResolvedOptions {
  apiKey: string;
  baseUrl: string;
  /** Pathname of the base URL, for error messages: `/api/`. */
  basePath: string;
  /** Host of the base URL without IPv6 brackets, and its port (the scheme's default if none): for tracing. */
  serverAddress: string;
  serverPort: number;
  authHeader: AuthHeader;
  timeout: number;
  maxRetries: number;
  maxRetryDelay: number;
  retryDelay: ((retry: number) => number) | undefined;
  maxResponseBytes: number;
  fetch: FetchLike | undefined;
  dispatcher: Dispatcher | undefined;
  headers: Record<string, string>;
  logger: Logger;
  logLevel: LogLevel;
  validation: ValidationMode;
  cooldown: Cooldown;
  clock: Clock;
}

/** Per-call options after checks, with the client's defaults filled in. */
export interface CallOptions {
  signal: AbortSignal | undefined;
  timeout: number;
  maxRetries: number;
  headers: Record<string, string> | undefined;
}

const logLevels: readonly LogLevel[] = ['off', 'error', 'warn', 'info', 'debug'];
const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/**
 * An attempt's timeout when `timeout` is not given. One constant: the access cache bounds its wait for
 * another instance's lease by the same figure (client.ts), which would drift from a second copy.
 */
export const DEFAULT_TIMEOUT_MS = 30_000;

const headers: Rule = (v, field = 'headers') => headerIssues(field, v);
const logger: Rule = (v) =>
  ['error', 'warn', 'info', 'debug'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function')
    ? undefined
    : 'must have error, warn, info and debug methods';
const clientRules: Record<keyof ClientOptions, Rule[]> = {
  apiKey: [text],
  baseUrl: [text],
  authHeader: [oneOf(['authorization', 'x-api-key'])],
  timeout: [positive],
  maxRetries: [integer(0)],
  maxRetryDelay: [nonNegative],
  retryDelay: [func],
  maxResponseBytes: [positive],
  fetch: [func],
  dispatcher: [
    (v) =>
      typeof (v as { request?: unknown }).request === 'function'
        ? undefined
        : 'must be an undici Dispatcher (with a request method)',
  ],
  headers: [headers],
  logger: [logger],
  logLevel: [oneOf(logLevels)],
  validation: [oneOf(['strict', 'warn', 'off'])],
  dangerouslyAllowBrowser: [boolean],
  allowInsecureHttp: [boolean],
  cooldown: [
    (v) =>
      typeof (v as { acquire?: unknown }).acquire === 'function' ? undefined : 'must have an acquire method',
  ],
};

/** The rules of per-call options, for methods that take more options than these. */
export const requestRules: Record<keyof RequestOptions, Rule[]> = {
  signal: [abortSignal],
  timeout: [positive],
  maxRetries: [integer(0)],
  headers: [headers],
};

/**
 * Applies defaults and env, and refuses what cannot work or would be unsafe: every refusal is an
 * {@link InvalidRequestError} of `new BillingClient` naming the option. The cooldown comes made
 * (the constructor makes it, so that clients from `withOptions` share it).
 */
export function resolveOptions(options: ClientOptions & { cooldown: Cooldown }): ResolvedOptions {
  check('new BillingClient', options, clientRules);
  const apiKey = options.apiKey ?? readEnv('BILLING_API_KEY');
  if (!apiKey) {
    refuse(
      'apiKey',
      'is missing: pass it to new BillingClient() or set the BILLING_API_KEY environment variable',
    );
  }
  if (!isValidApiKey(apiKey)) {
    // The key is not quoted: this message may well be logged.
    refuse('apiKey', 'must be printable ASCII without spaces or line breaks (check for a pasted newline)');
  }
  if (isBrowserWindow() && !options.dangerouslyAllowBrowser) {
    refuse(
      'dangerouslyAllowBrowser',
      'must be true to construct a client with an API key in a browser window, where every user of the page can read it: ' +
        'call the API from your server, or pass `dangerouslyAllowBrowser: true` if you accept the risk',
    );
  }
  const rawBase = options.baseUrl ?? readEnv('BILLING_BASE_URL');
  if (!rawBase) {
    refuse(
      'baseUrl',
      'is missing: pass the API root (ending in /api/) to new BillingClient() or set the BILLING_BASE_URL environment variable',
    );
  }
  const base = normaliseBaseUrl(rawBase, options.allowInsecureHttp ?? false);
  if (options.fetch && options.dispatcher) {
    refuse('dispatcher', 'cannot be combined with fetch (a custom fetch picks its own dispatcher)');
  }
  const envLevel = readEnv('BILLING_LOG') as LogLevel | undefined;
  const logger = options.logger ?? console;
  if (envLevel && !logLevels.includes(envLevel) && !options.logLevel) {
    try {
      logger.warn(
        `[billing-sdk] BILLING_LOG=${envLevel} is not a level (${logLevels.join(', ')}); using 'warn'.`,
      );
    } catch {
      // A broken logger loses a line, never a client.
    }
  }
  return {
    apiKey,
    baseUrl: base.href,
    basePath: base.pathname,
    // OpenTelemetry's server.address: an IPv6 address without the URL's brackets.
    serverAddress: base.hostname.replace(/^\[(.*)\]$/, '$1'),
    serverPort: base.port ? Number(base.port) : base.protocol === 'https:' ? 443 : 80,
    authHeader: options.authHeader ?? 'authorization',
    timeout: options.timeout ?? DEFAULT_TIMEOUT_MS,
    maxRetries: options.maxRetries ?? 2,
    maxRetryDelay: options.maxRetryDelay ?? 60_000,
    retryDelay: options.retryDelay,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    fetch: options.fetch,
    dispatcher: options.dispatcher,
    headers: { ...options.headers },
    logger,
    logLevel: options.logLevel ?? (envLevel && logLevels.includes(envLevel) ? envLevel : 'warn'),
    validation: options.validation ?? 'strict',
    cooldown: options.cooldown,
    clock: clockOf(options),
  };
}

/**
 * Checks a call's options and fills in the client's defaults. Throws {@link InvalidRequestError}
 * naming the operation, so a bad `signal`, `timeout` or header fails before anything is sent.
 */
export function callOptions(
  operation: string,
  options: unknown,
  defaults: Pick<ResolvedOptions, 'timeout' | 'maxRetries'>,
): CallOptions {
  check(operation, options, requestRules, undefined, 'options.');
  const o = (options ?? {}) as RequestOptions;
  return {
    // The call's own signal, following the caller's: the SDK's listeners go on it, not on a signal
    // the caller may share between many calls.
    signal: o.signal && anySignal([o.signal]),
    timeout: o.timeout ?? defaults.timeout,
    maxRetries: o.maxRetries ?? defaults.maxRetries,
    headers: o.headers,
  };
}

/** Throws the {@link InvalidRequestError} of `new BillingClient` for one option. */
function refuse(field: keyof ClientOptions, message: string): never {
  throw new InvalidRequestError('new BillingClient', [{ field, message }]);
}

function normaliseBaseUrl(raw: string, allowInsecureHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    refuse('baseUrl', `must be an absolute URL (got ${JSON.stringify(raw)})`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    refuse('baseUrl', `must use https: (got ${url.protocol})`);
  }
  if (url.username || url.password) {
    refuse('baseUrl', 'must not contain credentials: pass the key as `apiKey`');
  }
  if (url.protocol === 'http:' && !allowInsecureHttp && !isLoopback(url.hostname)) {
    refuse(
      'baseUrl',
      `must use https: (with http: to ${url.hostname}, the API key would travel unencrypted), ` +
        'or pass `allowInsecureHttp: true` for a trusted network',
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
