import { watchAccounts } from '../util/account-changes.js';
import { unref } from '../util/timers.js';
import type { AccountState, AccountStateStats } from './state-types.js';

const encoder = /* @__PURE__ */ new TextEncoder();

/** A state without its read time: two reads that found the same state compare equal. */
const contentOf = (state: AccountState): string => JSON.stringify({ ...state, updated_at: undefined });

/** One `state` event. `retry` tells an `EventSource` how long to wait before it reconnects. */
const eventOf = (state: AccountState): Uint8Array =>
  encoder.encode(`event: state\ndata: ${JSON.stringify(state)}\n\n`);
const HELLO = /* @__PURE__ */ encoder.encode('retry: 1000\n\n');
const HEARTBEAT = /* @__PURE__ */ encoder.encode(': heartbeat\n\n');

/** The headers of a stream: never cached, never buffered by a proxy that honours `X-Accel-Buffering`. */
export const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'private, no-store, no-transform',
  'x-accel-buffering': 'no',
  vary: 'accept',
};

/** What the streams of one state endpoint share. */
export interface StreamLimits {
  perAccount: number;
  total: number;
  heartbeatMs: number;
}

/**
 * One open stream: sends the state, then each new state of its account. A change while a read runs
 * asks for one more read after it (a burst comes to at most two reads; the latest state wins), and a
 * read that finds what was last sent sends nothing. A client that does not read (a stalled
 * connection) is not queued for: while its queue is full, a new state replaces the one waiting and a
 * heartbeat is left out, so what a stream holds stays bounded.
 */
class StateStream {
  #last: string;
  #reading = false;
  #again = false;
  /** The latest state not yet queued: sent when the client reads (`pull`). */
  #waiting: Uint8Array | undefined;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  readonly body: ReadableStream<Uint8Array>;

  constructor(
    readonly account: string,
    first: AccountState,
    private readonly read: () => Promise<AccountState>,
    private readonly fail: (error: unknown) => void,
    private readonly gone: (stream: StateStream) => void,
  ) {
    this.#last = contentOf(first);
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
        controller.enqueue(HELLO);
        controller.enqueue(eventOf(first));
      },
      pull: () => {
        const waiting = this.#waiting;
        this.#waiting = undefined;
        if (waiting) this.send(waiting);
      },
      cancel: () => this.end(),
    });
  }

  /** The account may have changed: read it again (once more after a read under way). */
  changed(): void {
    if (!this.#controller) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    this.read().then(
      (state) => {
        this.#reading = false;
        const content = contentOf(state);
        if (content !== this.#last) {
          this.#last = content;
          this.send(eventOf(state), true);
        }
        if (this.#again) {
          this.#again = false;
          this.changed();
        }
      },
      (error: unknown) => {
        // Never a made-up state: the stream ends, and the client reads the state again (503 while it fails).
        this.#reading = false;
        this.fail(error);
        this.end();
      },
    );
  }

  /** Queues `chunk`; while the client's queue is full, a state waits (the latest only), a heartbeat is left out. */
  send(chunk: Uint8Array, state = false): void {
    const controller = this.#controller;
    if (!controller) return;
    if ((controller.desiredSize ?? 0) <= 0) {
      if (state) this.#waiting = chunk;
      return;
    }
    try {
      controller.enqueue(chunk);
    } catch {
      this.end(); // the body was cancelled or errored under us
    }
  }

  /** Ends the stream (idempotent) and leaves the registry. */
  end(): void {
    const controller = this.#controller;
    if (!controller) return;
    this.#controller = undefined;
    this.#waiting = undefined;
    try {
      controller.close();
    } catch {
      // already closed or cancelled
    }
    this.gone(this);
  }
}

/**
 * The open streams of one state endpoint, by account: the limits, one heartbeat timer for all, and
 * one listener on the gate's access cache and client while any stream is open (none left after the
 * last one ends).
 */
export class StateStreams {
  readonly #byAccount = new Map<string, Set<StateStream>>();
  #count = 0;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #unwatch: (() => void)[] = [];

  constructor(
    private readonly limits: StreamLimits,
    /** The objects whose account changes the streams hear (the access cache, the client). */
    private readonly owners: readonly object[],
    /** Told first of every change heard (the balances drop the account's). */
    private readonly onChange: (account: string | undefined) => void,
  ) {}

  /** Whether `account` may open one more stream. */
  hasRoom(account: string): boolean {
    return (
      this.#count < this.limits.total && (this.#byAccount.get(account)?.size ?? 0) < this.limits.perAccount
    );
  }

  /**
   * A stream of `account`'s states, `first` sent at once; ended when `signal` aborts, the body is
   * cancelled, or {@link close}. `undefined` when a limit is reached. `stale`: a change was heard
   * while `first` was read, so it is read again at once.
   */
  open(
    account: string,
    first: AccountState,
    read: () => Promise<AccountState>,
    signal: AbortSignal | undefined,
    fail: (error: unknown) => void,
    stale = false,
  ): ReadableStream<Uint8Array> | undefined {
    if (!this.hasRoom(account) || signal?.aborted) return undefined;
    const abort = () => stream.end();
    const stream: StateStream = new StateStream(account, first, read, fail, (s) => {
      signal?.removeEventListener('abort', abort);
      this.#remove(s);
    });
    let set = this.#byAccount.get(account);
    if (!set) {
      set = new Set();
      this.#byAccount.set(account, set);
    }
    set.add(stream);
    if (this.#count++ === 0) this.#start();
    signal?.addEventListener('abort', abort, { once: true });
    if (stale) stream.changed();
    return stream.body;
  }

  /** Ends every stream. */
  close(): void {
    for (const set of [...this.#byAccount.values()]) for (const stream of [...set]) stream.end();
  }

  stats(): AccountStateStats {
    return { streams: this.#count, accounts: this.#byAccount.size };
  }

  #changed(account: string | undefined): void {
    this.onChange(account);
    const sets = account === undefined ? [...this.#byAccount.values()] : [this.#byAccount.get(account)];
    for (const set of sets) if (set) for (const stream of set) stream.changed();
  }

  #start(): void {
    const listener = (account: string | undefined) => this.#changed(account);
    this.#unwatch = this.owners.map((owner) => watchAccounts(owner, listener));
    this.#heartbeat = unref(
      setInterval(() => {
        for (const set of this.#byAccount.values()) for (const stream of set) stream.send(HEARTBEAT);
      }, this.limits.heartbeatMs),
    );
  }

  #remove(stream: StateStream): void {
    const set = this.#byAccount.get(stream.account);
    if (!set?.delete(stream)) return;
    if (set.size === 0) this.#byAccount.delete(stream.account);
    if (--this.#count > 0) return;
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    for (const unwatch of this.#unwatch) unwatch();
    this.#unwatch = [];
  }
}
