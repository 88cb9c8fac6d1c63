import { AccountViewError } from '../core/errors/view.js';
import type { AccountState } from '../gate/state-types.js';
import { backoffMs } from './backoff.js';
import { readEvents } from './events.js';

/** Options of {@link createAccountView}. */
export interface AccountViewOptions {
  /** The app's `gate.state` endpoint (same origin: the session cookie goes with it). */
  url: string | URL;
  /**
   * Keep the state live through the endpoint's stream (Server-Sent Events), reconnecting after a
   * drop. Default `true`; `false` reads it once, then again on `refresh()` and when the page
   * regains focus.
   */
  live?: boolean | undefined;
  /** The `fetch` to use (a wrapper adding a header, a test's); default the global one. */
  fetch?: typeof fetch | undefined;
  /**
   * Told of each failure the view meets on its own (an {@link AccountViewError}: a dropped stream, an
   * answer that is not a state, a refusal) and of what a `subscribe` listener threw; the state stays
   * as it was. Without it, a listener's throw is rethrown outside the view (the console shows it) and
   * the view's own failures are only retried.
   */
  onError?: ((error: unknown) => void) | undefined;
}

/**
 * The account's billing state in the browser, kept up to date. Fits React's
 * `useSyncExternalStore(view.subscribe, view.get)` as it is: `get` returns the same object until the
 * state changes.
 */
export interface AccountView {
  /** The first state; rejects with an {@link AccountViewError} when it could not be read (401 without a session). */
  readonly ready: Promise<AccountState>;
  /** The state now: `undefined` until the first one came, then the same object until it changes. */
  get(): AccountState | undefined;
  /** Calls `listener` after each change of the state; returns the function that stops it. */
  subscribe(listener: () => void): () => void;
  /** Whether the account has the feature the view's `features` names `name` (`false` until known). */
  can(name: string): boolean;
  /** The balance of a credits meter the view shows; `undefined` until known. */
  balance(product_code: string, meter_code: string): number | undefined;
  /** Reads the state now (JSON), and answers it. */
  refresh(): Promise<AccountState>;
  /** Stops the stream, the reconnects and the focus listener; the state stays as it was. */
  close(): void;
}

/** How long a stream must have lasted after its first state for a drop to be retried at once. */
const LASTED_MS = 5_000;

/** A state without its read time: two reads of the same state compare equal. */
const contentOf = (state: AccountState): string => JSON.stringify({ ...state, updated_at: 0 });

/** An endpoint's answer that is not a state: the status says why. */
const httpError = (res: Response) =>
  new AccountViewError('http', `the state endpoint answered ${res.status}`, res.status);

/** Throws outside the view, where the page's error reporting sees it, without breaking its caller. */
const rethrow = (error: unknown) =>
  void setTimeout(() => {
    throw error;
  });

/**
 * The state in a JSON text; an answer that is not one (a proxy's page, a cut body) is refused, so
 * that `can` and `balance` never meet a half state.
 */
const parse = (text: string): AccountState => {
  let s: AccountState | undefined;
  try {
    s = JSON.parse(text);
  } catch {}
  if (!(s?.features instanceof Object && s.credits instanceof Object))
    throw new AccountViewError('invalid_answer', 'the state endpoint answered something that is not a state');
  return s;
};

/** The options, each checked before anything is asked: a wrong one is an `invalid_options` error. */
const checked = (options: AccountViewOptions): AccountViewOptions => {
  const o = (options ?? {}) as AccountViewOptions;
  const { url, live = true, fetch: given, onError } = o;
  if ((typeof url !== 'string' || !url) && !(url instanceof URL))
    throw new AccountViewError('invalid_options', 'url must be a non-empty string or a URL');
  if (given !== undefined && typeof given !== 'function')
    throw new AccountViewError('invalid_options', 'fetch must be a function');
  if (typeof live !== 'boolean') throw new AccountViewError('invalid_options', 'live must be a boolean');
  if (onError !== undefined && typeof onError !== 'function')
    throw new AccountViewError('invalid_options', 'onError must be a function');
  return o;
};

/**
 * The browser half of `gate.state`: reads the state of the signed-in customer's account from the
 * app's endpoint and keeps it live (the stream; after a drop it reconnects with backoff and the
 * state is read again; where streams are blocked, it reads the state again whenever the page
 * regains focus). It holds no key: the endpoint answers the session's own account only.
 *
 * @param options - See {@link AccountViewOptions}.
 * @throws {@link AccountViewError} (`reason: 'invalid_options'`) for a missing `url` or a bad option.
 * @example
 * ```ts
 * import { createAccountView } from 'billing-sdk/view';
 *
 * const view = createAccountView({ url: '/billing/state' });
 * view.subscribe(() => {
 *   const button = document.querySelector<HTMLButtonElement>('#export');
 *   if (button) button.disabled = !view.can('export');
 * });
 * ```
 */
export function createAccountView(options: AccountViewOptions): AccountView {
  const { url, live = true, fetch: given, onError } = checked(options);
  const doFetch = given ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const listeners = new Set<() => void>();
  let state: AccountState | undefined;
  let content = '';
  let closed = false;
  let streaming = false;
  let attempt = 0;
  let controller: AbortController | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let settle: [(s: AccountState) => void, (e: unknown) => void] | undefined;
  /** How many states were taken: a refresh's answer that is older than one taken meanwhile is not. */
  let version = 0;
  const ready = new Promise<AccountState>((resolve, reject) => {
    settle = [resolve, reject];
  });
  // A page that never awaits `ready` must not see an unhandled rejection.
  ready.catch(() => {});

  /** `loud`: a listener's throw, rethrown when no `onError` takes it. */
  const report = (error: unknown, loud?: boolean) => {
    try {
      if (onError) onError(error);
      else if (loud) rethrow(error);
    } catch (thrown) {
      rethrow(thrown);
    }
  };
  const set = (next: AccountState): AccountState => {
    const c = contentOf(next);
    if (c !== content) {
      content = c;
      state = next;
      version++;
      // One listener's throw is not the others' nor the stream's; one unsubscribed meanwhile is not told.
      for (const listener of [...listeners])
        if (listeners.has(listener))
          try {
            listener();
          } catch (error) {
            report(error, true);
          }
    }
    settle?.[0](state as AccountState);
    return state as AccountState;
  };
  const failed = (error: unknown) =>
    closed
      ? new AccountViewError('closed', 'the view is closed')
      : new AccountViewError('network', `the state endpoint could not be reached (${String(error)})`);
  const request = (accept: string, signal?: AbortSignal) =>
    doFetch(url, { headers: { accept }, cache: 'no-store', credentials: 'same-origin', signal }).catch(
      (error: unknown) => {
        throw failed(error);
      },
    );
  /** The state a JSON answer holds. */
  const read = (res: Response) =>
    res.text().then(parse, (error: unknown) => {
      throw failed(error);
    });
  const refresh = async (): Promise<AccountState> => {
    if (closed) throw new AccountViewError('closed', 'the view is closed');
    const asked = version;
    const res = await request('application/json');
    if (!res.ok) throw httpError(res);
    const next = await read(res);
    if (closed) throw failed(0);
    // A state taken while this one travelled (the stream's) and read after it stands.
    return version !== asked && state && state.updated_at > next.updated_at ? state : set(next);
  };

  /** One stream, from its opening to its end; then the next one after a backoff. */
  const connect = async (): Promise<void> => {
    const c = new AbortController();
    controller = c;
    let again = true;
    let since = 0;
    try {
      const res = await request('text/event-stream', c.signal);
      if (!res.ok) {
        // Only a busy or failing server is asked again; a refusal (401: no session) stands.
        again = res.status === 429 || res.status >= 500;
        throw httpError(res);
      }
      if (!res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
        // Something between answered without a stream: its JSON is the state, focus reads the next.
        again = false;
        set(await read(res));
        return;
      }
      // Live once a state came: a stream whose events are held back (a buffering proxy) leaves focus
      // to read the state.
      await readEvents(res.body, (data) => {
        set(parse(data));
        since ||= Date.now();
        streaming = true;
      });
    } catch (thrown) {
      // A body cut under way rejects with the platform's error: the view's own says what happened.
      const error = thrown instanceof AccountViewError ? thrown : failed(thrown);
      if (!state) settle?.[1](error);
      if (!closed) report(error);
    } finally {
      streaming = false;
      // A stream given up (a malformed event) is closed, not left open on the server, where it counts.
      c.abort();
    }
    if (closed || !again) return;
    // Only a stream that lasted starts the backoff over: one dropped right after its first state (a
    // proxy that cuts it, an answer it cannot read) waits longer each time, never every half second.
    if (since && Date.now() - since >= LASTED_MS) attempt = 0;
    timer = setTimeout(connect, backoffMs(attempt++, Math.random()));
  };

  const onFocus = () => {
    if (!streaming && !closed && (typeof document === 'undefined' || document.visibilityState !== 'hidden'))
      refresh().catch(report);
  };
  const target = typeof window === 'undefined' ? undefined : window;
  target?.addEventListener('focus', onFocus);
  target?.addEventListener('visibilitychange', onFocus);

  if (live) void connect();
  else refresh().catch((error: unknown) => settle?.[1](error));

  return {
    ready,
    get: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    can: (name) => state?.features[name] === true,
    balance: (product_code, meter_code) => state?.credits[product_code]?.[meter_code],
    refresh,
    close() {
      closed = true;
      clearTimeout(timer);
      controller?.abort();
      target?.removeEventListener('focus', onFocus);
      target?.removeEventListener('visibilitychange', onFocus);
      listeners.clear();
    },
  };
}
