import { type Clock, monotonicNow } from '../util/clock.js';
import { randomUUID } from '../util/uuid.js';
import type { SpooledEvent } from './spool.js';

/**
 * Most events summed into one aggregate. A bound on what one `spool.replace` writes at once (its
 * member ids are one atomic record, Lua script or transaction): 10 000 events still make only 10
 * requests.
 */
export const MAX_AGGREGATE_MEMBERS = 1000;

/** An event waiting in a window: the tracker's entry, whose `event` is summed. */
export interface AggregateMember {
  event: SpooledEvent;
}

/** What {@link createSumWindows} needs. */
export interface SumWindowsOptions<M extends AggregateMember> {
  /** How long a window stays open after its first event. */
  windowMs: number;
  /** Times the windows. */
  clock: Clock;
  /**
   * A window closed: the aggregate to put in place of its members (with its key fixed here, once),
   * or `undefined` when the window holds one event, which is then sent as it is.
   */
  formed(members: M[], aggregate: SpooledEvent | undefined): void;
}

/** Windows of summable events, one per account, product and meter. */
export interface SumWindows<M extends AggregateMember> {
  /**
   * Puts an event (no metadata, no key of the caller's) in its meter's window, opening one if needed.
   * With `withinMs` shorter than what is left of the window, the window closes `withinMs` from now
   * instead: an event handed to a platform's `waitUntil` is not held past what the platform allows.
   */
  add(member: M, withinMs?: number): void;
  /** Closes every window now (a flush or a close must not wait for them). */
  formAll(): void;
  /** Stops the timers and forgets the windows: their members stay in the spool, unsent. */
  stop(): void;
}

interface Window<M> {
  members: M[];
  quantity: number;
  timer: AbortController;
  /**
   * When the window closes, on the clock's monotonic time: a wall-clock step (NTP, a resumed VM)
   * must neither keep a window open past what a `waitUntil` allows nor close one early.
   */
  closesAt: number;
}

/**
 * Sums events per meter over `windowMs`. A window is closed (and `formed` told) when its time is
 * up, when it reaches {@link MAX_AGGREGATE_MEMBERS} events, or before a sum would pass
 * `Number.MAX_SAFE_INTEGER` (what the service can count exactly).
 */
export function createSumWindows<M extends AggregateMember>(options: SumWindowsOptions<M>): SumWindows<M> {
  const { windowMs, clock, formed } = options;
  const windows = new Map<string, Window<M>>();

  const form = (key: string, window: Window<M>) => {
    if (windows.get(key) !== window) return; // closed already (a flush, a full window)
    windows.delete(key);
    window.timer.abort();
    const [first] = window.members;
    if (!first) return;
    if (window.members.length === 1) {
      formed(window.members, undefined);
      return;
    }
    // The key is fixed here, once: the aggregate goes into the spool with it before any send, so a
    // crash and a replay send the same sum under the same key.
    const { account_ref_id, product_code, meter_code } = first.event;
    const aggregate: SpooledEvent = {
      account_ref_id,
      product_code,
      meter_code,
      quantity: window.quantity,
      event_key: randomUUID(),
    };
    formed(window.members, aggregate);
  };

  /** (Re)starts the window's timer: it closes `ms` from now. */
  const closeIn = (key: string, window: Window<M>, ms: number) => {
    window.timer.abort();
    window.timer = new AbortController();
    window.closesAt = monotonicNow(clock) + ms;
    clock
      .sleep(ms, window.timer.signal, () => new Error('window closed'))
      .then(
        () => form(key, window),
        () => {}, // closed early (formed already, or stopped), or its timer restarted shorter
      );
  };

  const open = (key: string, ms: number): Window<M> => {
    const window: Window<M> = { members: [], quantity: 0, timer: new AbortController(), closesAt: 0 };
    windows.set(key, window);
    closeIn(key, window, ms);
    return window;
  };

  return {
    add(member, withinMs = windowMs) {
      const { account_ref_id, product_code, meter_code, quantity } = member.event;
      const key = JSON.stringify([account_ref_id, product_code, meter_code]);
      let window = windows.get(key);
      if (
        window &&
        (window.members.length >= MAX_AGGREGATE_MEMBERS ||
          window.quantity + quantity > Number.MAX_SAFE_INTEGER)
      ) {
        form(key, window);
        window = undefined;
      }
      if (!window) window = open(key, Math.min(windowMs, withinMs));
      else if (window.closesAt > monotonicNow(clock) + withinMs) closeIn(key, window, withinMs);
      window.members.push(member);
      window.quantity += quantity;
    },
    formAll() {
      for (const [key, window] of [...windows]) form(key, window);
    },
    stop() {
      for (const window of windows.values()) window.timer.abort();
      windows.clear();
    },
  };
}
