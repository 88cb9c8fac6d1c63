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

/** A state without its read time: two reads of the same state compare equal. */
const contentOf = (state: AccountState): string => JSON.stringify({ ...state, updated_at: 0 });

/** An endpoint's answer that is not a state: the status says why. */
const httpError = (res: Response) =>
  new AccountViewError('http', `the state endpoint answered ${res.status}`, res.status);

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
  const { url, live = true, fetch: given } = (options ?? {}) as AccountViewOptions;
  if ((typeof url !== 'string' || !url) && !(url instanceof URL))
    throw new AccountViewError('invalid_options', 'url must be a non-empty string or a URL');
  if (given !== undefined && typeof given !== 'function')
    throw new AccountViewError('invalid_options', 'fetch must be a function');
  if (typeof live !== 'boolean') throw new AccountViewError('invalid_options', 'live must be a boolean');
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
  const ready = new Promise<AccountState>((resolve, reject) => {
    settle = [resolve, reject];
  });
  // A page that never awaits `ready` must not see an unhandled rejection.
  ready.catch(() => {});

  const set = (next: AccountState): AccountState => {
    const c = contentOf(next);
    if (c !== content) {
      content = c;
      state = next;
      for (const listener of [...listeners]) listener();
    }
    settle?.[0](state as AccountState);
    return state as AccountState;
  };
  const request = (accept: string, signal?: AbortSignal) =>
    doFetch(url, { headers: { accept }, cache: 'no-store', credentials: 'same-origin', signal }).catch(
      (error: unknown) => {
        throw closed
          ? new AccountViewError('closed', 'the view is closed')
          : new AccountViewError('network', `the state endpoint could not be reached (${String(error)})`);
      },
    );
  const refresh = async (): Promise<AccountState> => {
    if (closed) throw new AccountViewError('closed', 'the view is closed');
    const res = await request('application/json');
    if (!res.ok) throw httpError(res);
    return set((await res.json()) as AccountState);
  };

  /** One stream, from its opening to its end; then the next one after a backoff. */
  const connect = async (): Promise<void> => {
    controller = new AbortController();
    let again = true;
    try {
      const res = await request('text/event-stream', controller.signal);
      if (!res.ok) {
        // Only a busy or failing server is asked again; a refusal (401: no session) stands.
        again = res.status === 429 || res.status >= 500;
        throw httpError(res);
      }
      if (!res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
        // Something between answered without a stream: its JSON is the state, focus reads the next.
        again = false;
        set((await res.json()) as AccountState);
        return;
      }
      streaming = true;
      await readEvents(res.body, (data) => {
        attempt = 0;
        set(JSON.parse(data) as AccountState);
      });
    } catch (error) {
      if (!state) settle?.[1](error);
    } finally {
      streaming = false;
    }
    if (closed || !again) return;
    timer = setTimeout(connect, backoffMs(attempt++, Math.random()));
  };

  const onFocus = () => {
    if (!streaming && !closed && (typeof document === 'undefined' || document.visibilityState !== 'hidden'))
      refresh().catch(() => {});
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
