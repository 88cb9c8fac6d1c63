import type { BillingClient } from '../client.js';
import type { TrackerEvent } from '../core/diagnostics.js';
import {
  APIError,
  type BillingError,
  InvalidRequestError,
  SpoolError,
  UsageTrackerError,
} from '../core/errors.js';
import { check, nonNegative } from '../internal/checks.js';
import { type UsageWriteParams, usageWriteRules } from '../resources/usage.js';
import { channel, publish } from '../util/diagnostics.js';
import { randomUUID } from '../util/uuid.js';
import { type Aggregator, createAggregator } from './aggregator.js';
import { trackerBackoff } from './backoff.js';
import { batcher } from './batcher.js';
import { isTransient } from './classify.js';
import {
  type DeadLetterReason,
  MAX_TIMER_MS,
  resolveTrackerOptions,
  type UsageTrackerOptions,
} from './options.js';
import type { SpoolEntry, SpooledEvent } from './spool.js';

/** Counters of a {@link UsageTracker}, in events (an aggregate counts as the events it sums). */
export interface TrackerStats {
  /** Events waiting to be sent: in the spool, in an aggregation window, or waiting out a backoff. */
  queued: number;
  /** Events being sent (their request, and their acknowledgement in the spool, under way). */
  inFlight: number;
  /** Events the service recorded (including replays it answered `idempotent: true`). */
  recorded: number;
  /** Events handed to `onDeadLetter`. */
  deadLettered: number;
  /** Failed sends that will be sent again (each was told to `onError`). */
  retries: number;
  /** Age in ms of the oldest event not yet recorded or dead-lettered; 0 when there is none. */
  oldestQueuedMs: number;
}

/** Options of {@link UsageTracker.close}. */
export interface TrackerCloseOptions {
  /**
   * Milliseconds allowed to send what is queued before giving up; what is left stays in a durable
   * spool for the next start. Default 10 000; `Infinity` waits for everything; 0 sends nothing more.
   */
  timeoutMs?: number | undefined;
}

/** What {@link UsageTracker.close} left. */
export interface TrackerCloseResult {
  /**
   * Events this tracker tracked or took that were neither recorded nor dead-lettered: kept by a
   * durable spool for the next start, lost with a memory spool.
   */
  unsent: number;
}

/** The background sender made by {@link createUsageTracker}. */
export interface UsageTracker {
  /**
   * Checks the event as `usage.record` does (a bad one rejects with {@link InvalidRequestError} and
   * nothing is queued), fixes its `event_key` (yours, or a new UUID) and resolves once the event is in
   * the spool, with the key it will be recorded under. Waits for room when `maxQueued` events are
   * waiting (or rejects with {@link UsageTrackerError} `'full'` under `onFull: 'reject'`); rejects with
   * `'closed'` after {@link close}, and with a `SpoolError` when the spool could not store it.
   */
  track(event: UsageWriteParams): Promise<{
    /** The key the event is recorded under: yours, or the one generated for it. */
    event_key: string;
  }>;
  /**
   * Resolves once every event tracked before it is recorded or dead-lettered (and what a previous run
   * left in a durable spool was sent). Windows of aggregation close at once. Waits through an outage;
   * rejects with {@link UsageTrackerError} `'closed'` if `close` gives up first, and with the spool's
   * error if it cannot be opened. After `close`, resolves at once.
   */
  flush(): Promise<void>;
  /**
   * Stops taking events, sends what is queued within `timeoutMs`, then releases the spool. Resolves
   * with how many events were left unsent. Call it on shutdown (SIGTERM).
   */
  close(options?: TrackerCloseOptions): Promise<TrackerCloseResult>;
  /** Counters, true at every moment. */
  stats(): TrackerStats;
}

/** An entry this tracker knows and that is not acknowledged yet. */
interface Local {
  id: string;
  event: SpooledEvent;
  /** Events it stands for: 1, or the members of an aggregate. */
  weight: number;
  /** When its (first) event was tracked, on the tracker's clock. */
  since: number;
  /** Whether this process was handed it by `take` (else another instance may send it). */
  handed: boolean;
  sending: boolean;
}

/** Entries asked of the spool at a time. */
const TAKE_BATCH = 256;
/** How often an idle tracker looks for work another process left (a shared Redis spool) and for its events sent elsewhere. */
const IDLE_POLL_MS = 1000;
const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

/** Calls a user callback: one that throws or rejects never changes a result. */
function safely(fn: (() => unknown) | undefined): Promise<void> {
  if (!fn) return Promise.resolve();
  try {
    return Promise.resolve(fn()).then(
      () => {},
      () => {},
    );
  } catch {
    return Promise.resolve();
  }
}

/** Where the tracker's steps are published (see core/diagnostics.ts); `undefined` in browsers. */
const trackerChannel = /* @__PURE__ */ channel('billing-sdk:tracker');

/**
 * Records usage in the background: `track` puts an event in a spool and returns at once; the
 * tracker sends it through `billing.usage.record` (so the client's retries, cooldown and timeouts
 * apply), `concurrency` at a time, and keeps sending what fails transiently, with backoff, until it
 * is recorded. Every event gets its key before it is stored, so an event is recorded exactly once
 * whatever fails: a repeated key is answered `idempotent: true` by the service.
 *
 * - **Nothing is dropped silently**: a full queue waits (or rejects typed); a refusal goes to
 *   `onDeadLetter`, once.
 * - **Durability is the spool's**: `memorySpool()` (default) loses what was not sent when the process
 *   dies; `fileSpool(dir)` (`billing-sdk/node`) and `redisSpool(client)` (`billing-sdk/redis`) hand
 *   it to the next start, which sends it first with the same keys.
 * - **Aggregation** (`aggregate: { windowMs }`, opt-in) sums events of one meter without metadata or
 *   key of yours into one request per window.
 *
 * @param billing - The client to send with.
 * @param options - {@link UsageTrackerOptions}.
 * @throws {@link InvalidRequestError} naming the bad option, before anything starts.
 *
 * @example
 * ```ts
 * import { BillingClient, createUsageTracker } from 'billing-sdk';
 *
 * const billing = new BillingClient();
 * const tracker = createUsageTracker(billing, {
 *   onDeadLetter: (event, reason) => console.error('usage refused', event.event_key, reason),
 * });
 * // In a request handler: costs microseconds, never waits for the service.
 * await tracker.track({ account_ref_id: 'acct_1', product_code: 'api-gateway', meter_code: 'api_calls', quantity: 1 });
 * // On shutdown: send what is queued, within 10 s.
 * process.once('SIGTERM', () => void tracker.close({ timeoutMs: 10_000 }).then(({ unsent }) => process.exit(unsent ? 1 : 0)));
 * ```
 */
export function createUsageTracker(billing: BillingClient, options?: UsageTrackerOptions): UsageTracker {
  if (typeof (billing as { usage?: { record?: unknown } } | null)?.usage?.record !== 'function') {
    throw new InvalidRequestError('createUsageTracker', [
      { field: 'billing', message: 'must be a BillingClient' },
    ]);
  }
  const { spool, concurrency, maxQueued, onFull, windowMs, onDeadLetter, onError, clock } =
    resolveTrackerOptions(options);

  let phase: 'new' | 'running' | 'closing' | 'closed' = 'new';
  let opening: Promise<void> | undefined;
  /** Set when close gives up: sends and waits are aborted, nothing new starts. */
  const stop = new AbortController();
  const stopped = new Promise<false>((resolve) =>
    stop.signal.addEventListener('abort', () => resolve(false), { once: true }),
  );

  const locals = new Map<string, Local>();
  let queuedWeight = 0;
  let inFlightWeight = 0;
  /** Room granted to `track` calls whose append has not resolved yet. */
  let reserved = 0;
  let recorded = 0;
  let deadLettered = 0;
  let retries = 0;

  /** Taken, waiting for a send slot (transient failures go back to the front). */
  const ready: Local[] = [];
  let active = 0;
  /** Spool calls and sends under way, so close releases the spool only once they are done. */
  let busy = 0;
  const quiet: (() => void)[] = [];
  let taking = false;
  /** Something arrived while a take was under way: take again rather than go idle. */
  let dirty = false;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;

  // Backoff after transient failures: sends pause, then one probe at a time until one succeeds.
  let failures = 0;
  let generation = 0;
  let paused = false;
  let probing = false;
  let takeFailures = 0;

  /** Keys of events tracked here that may be summed (no metadata, no caller key). */
  const summable = new Set<string>();
  const appending = new Set<Promise<unknown>>();
  const roomWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const flushWaiters = new Set<{ remaining: Set<string>; resolve: () => void }>();
  let drained: (() => void) | undefined;
  /** Flushes under way: windows of aggregation close as soon as they fill. */
  let flushing = 0;
  /** Resolves once a take hands fewer entries than asked: what a previous run left has been handed. */
  const leftoversHanded = new Promise<void>((resolve) => {
    drained = resolve;
  });

  const report = (error: unknown, event?: SpooledEvent) =>
    void safely(onError && (() => onError(error, event)));

  // Counters -----------------------------------------------------------------------------------

  /** Publishes a step on `billing-sdk:tracker` with the queue as it is after it. */
  const tell = (event: TrackerEvent['event']) =>
    publish(trackerChannel, (): TrackerEvent => ({ event, queued: queuedWeight, inFlight: inFlightWeight }));

  const unacknowledged = () => queuedWeight + inFlightWeight + reserved;

  const addLocal = (local: Local) => {
    locals.set(local.id, local);
    if (local.sending) inFlightWeight += local.weight;
    else queuedWeight += local.weight;
  };

  const removeLocal = (local: Local) => {
    locals.delete(local.id);
    if (local.sending) inFlightWeight -= local.weight;
    else queuedWeight -= local.weight;
  };

  const setSending = (local: Local, sending: boolean) => {
    if (local.sending === sending) return;
    local.sending = sending;
    const delta = sending ? local.weight : -local.weight;
    inFlightWeight += delta;
    queuedWeight -= delta;
  };

  /** The entry left this tracker (acknowledged here or elsewhere): wake what waited on it. */
  const settled = (local: Local, as: 'recorded' | 'deadLettered' | 'elsewhere') => {
    removeLocal(local);
    summable.delete(local.event.event_key); // when another instance sent it, it was never handed here
    if (as === 'recorded') {
      recorded += local.weight;
      tell('sent');
    } else if (as === 'deadLettered') {
      deadLettered += local.weight;
      tell('dead-letter');
    }
    for (const waiter of flushWaiters) {
      if (waiter.remaining.delete(local.id) && waiter.remaining.size === 0) {
        flushWaiters.delete(waiter);
        waiter.resolve();
      }
    }
    grantRoom();
  };

  // Backpressure -------------------------------------------------------------------------------

  /** Lets waiting `track` calls in, in order, while there is room; each reserves its place at once. */
  const grantRoom = () => {
    while (roomWaiters.length && unacknowledged() < maxQueued) {
      reserved++;
      roomWaiters.shift()?.resolve();
    }
  };

  const room = (): Promise<void> | undefined => {
    if (!roomWaiters.length && unacknowledged() < maxQueued) {
      reserved++;
      return undefined;
    }
    if (onFull === 'reject') {
      throw new UsageTrackerError(
        'full',
        `usageTracker.track: ${maxQueued} events are waiting to be sent (maxQueued); the event was not queued`,
      );
    }
    return new Promise<void>((resolve, reject) => roomWaiters.push({ resolve, reject }));
  };

  // Bookkeeping of spool calls -------------------------------------------------------------------

  const begin = () => {
    busy++;
  };
  const end = () => {
    busy--;
    if (busy === 0) for (const resolve of quiet.splice(0)) resolve();
  };
  const whenQuiet = () => (busy === 0 ? Promise.resolve() : new Promise<void>((r) => quiet.push(r)));

  const ack = batcher<string>(async (ids) => {
    begin();
    try {
      await spool.ack(ids);
    } finally {
      end();
    }
  });

  // Aggregation -----------------------------------------------------------------------------------

  const aggregator: Aggregator<Local> | undefined =
    windowMs === undefined
      ? undefined
      : createAggregator<Local>({
          windowMs,
          clock,
          formed: (members, aggregate) => {
            if (!aggregate) {
              ready.push(...members);
              pump();
            } else void replace(members, aggregate);
          },
        });

  /**
   * Puts the aggregate in the spool in place of its members, before it is sent. A failed replace is
   * retried with the same aggregate (same key): if an attempt did land after all, the service sees
   * that key twice and records it once. A `'conflict'` (a member acknowledged or claimed by another
   * instance meanwhile) wrote nothing: the members still pending are sent one by one, with their own
   * keys; the others were acknowledged elsewhere (or by an earlier attempt that landed, whose
   * aggregate is in the spool and will be sent).
   */
  async function replace(members: Local[], aggregate: SpooledEvent): Promise<void> {
    const ids = members.map((m) => m.id);
    begin();
    try {
      for (let attempt = 1; ; attempt++) {
        let failure: unknown;
        try {
          replaced(members, await spool.replace(ids, aggregate), aggregate);
          return;
        } catch (error) {
          if (stop.signal.aborted) return; // the members stay in the spool, unsent
          report(error);
          failure = error;
        }
        try {
          if (failure instanceof SpoolError && failure.code === 'conflict') {
            const pending = new Set(await spool.pending(ids));
            for (const member of members) {
              if (pending.has(member.id)) ready.push(member);
              else settled(member, 'elsewhere');
            }
            pump();
            return;
          }
        } catch (error) {
          report(error); // not knowing which members are left, try the replace again
        }
        try {
          await clock.sleep(trackerBackoff(attempt), stop.signal, () => new Error('stopped'));
        } catch {
          return;
        }
      }
    } finally {
      end();
    }
  }

  /** The aggregate is in the spool and its members are not: it stands for them from now on. */
  function replaced(members: Local[], id: string, aggregate: SpooledEvent): void {
    const weight = members.reduce((sum, m) => sum + m.weight, 0);
    const since = Math.min(...members.map((m) => m.since));
    for (const member of members) removeLocal(member);
    // A take under way may have handed the aggregate already, as an entry unknown here: that entry
    // takes the members' weight, so the counters neither count an event twice nor lose one.
    const known = locals.get(id);
    if (known) {
      removeLocal(known);
      Object.assign(known, { event: aggregate, weight, since });
      addLocal(known);
    } else {
      addLocal({ id, event: aggregate, weight, since, handed: false, sending: false });
    }
    for (const waiter of flushWaiters) {
      let had = false;
      for (const member of members) had = waiter.remaining.delete(member.id) || had;
      if (had) waiter.remaining.add(id);
    }
    wake();
  }

  // The delivery loop -------------------------------------------------------------------------------

  const wake = () => {
    dirty = true;
    pump();
  };

  /**
   * `wake` on the next turn of the event loop, once for a burst of `track` calls: starting a send
   * builds its request, which is not the caller's to pay for (measured: the calls that started one
   * cost 50–250 µs instead of a few).
   */
  let wakeScheduled = false;
  const wakeSoon = () => {
    dirty = true;
    if (wakeScheduled) return;
    wakeScheduled = true;
    setTimeout(() => {
      wakeScheduled = false;
      pump();
    }, 0);
  };

  function pump(): void {
    if (phase === 'new' || phase === 'closed' || stop.signal.aborted) return;
    const limit = probing ? 1 : concurrency;
    while (!paused && ready.length && active < limit) void send(ready.shift() as Local);
    if (!taking && ready.length < concurrency) void take();
  }

  async function take(): Promise<void> {
    taking = true;
    dirty = false;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = undefined;
    begin();
    let entries: SpoolEntry[];
    try {
      entries = await spool.take(TAKE_BATCH);
      takeFailures = 0;
    } catch (error) {
      report(error);
      takeFailures++;
      const delay = trackerBackoff(takeFailures);
      await clock.sleep(delay, stop.signal, () => new Error('stopped')).catch(() => {});
      taking = false;
      end();
      pump();
      return;
    }
    taking = false;
    for (const entry of entries) handed(entry);
    // A flush (or close) waits for these too: their windows must not make it wait out windowMs.
    if (flushing) aggregator?.formAll();
    if (entries.length < TAKE_BATCH) drained?.();
    end();
    if (entries.length || dirty) pump();
    else idle();
  }

  /** An entry handed by the spool: ours (tracked here), or one a previous run or another instance left. */
  function handed(entry: SpoolEntry): void {
    let local = locals.get(entry.id);
    // Handed already (a spool that hands an entry twice breaks its contract): sent once from here.
    if (local?.handed) return;
    if (!local) {
      local = {
        id: entry.id,
        event: entry.event,
        weight: 1,
        since: clock.now(),
        handed: true,
        sending: false,
      };
      addLocal(local);
    }
    local.handed = true;
    if (aggregator && summable.delete(entry.event.event_key)) aggregator.add(local);
    else ready.push(local);
  }

  /** Nothing to take right now: look again later, and see whether another instance sent our events. */
  function idle(): void {
    if (phase === 'closed' || stop.signal.aborted) return;
    idleTimer = setTimeout(() => {
      idleTimer = undefined;
      void settledElsewhere().then(pump);
    }, IDLE_POLL_MS);
    // An idle tracker must not keep the process alive; one with work keeps it through its sends and waits.
    (idleTimer as { unref?: () => void }).unref?.();
  }

  /** Events tracked here but handed to another instance (a shared spool): settled once it acknowledged them. */
  async function settledElsewhere(): Promise<void> {
    const theirs = [...locals.values()].filter((l) => !l.handed);
    if (!theirs.length || stop.signal.aborted) return;
    begin();
    try {
      const pending = new Set(await spool.pending(theirs.map((l) => l.id)));
      for (const local of theirs) if (!pending.has(local.id) && !local.handed) settled(local, 'elsewhere');
    } catch (error) {
      report(error);
    } finally {
      end();
    }
  }

  async function send(local: Local): Promise<void> {
    active++;
    begin();
    setSending(local, true);
    const sentIn = generation;
    try {
      let reason: DeadLetterReason | undefined;
      try {
        const result = await billing.usage.record(local.event, { signal: stop.signal });
        if (!result.accepted) reason = { type: 'refused', result };
      } catch (error) {
        if (stop.signal.aborted) {
          setSending(local, false); // close gave up on it: it stays in the spool
          return;
        }
        if (isTransient(error)) {
          retries++;
          report(error, local.event);
          setSending(local, false);
          tell('retry');
          ready.unshift(local);
          // Sends that were already under way when the backoff began do not lengthen it.
          if (sentIn === generation) backOff(error);
          return;
        }
        reason = { type: 'error', error: error as BillingError };
      }
      if (probing) {
        probing = false;
        failures = 0;
      }
      if (reason) {
        const told = reason;
        // Told before the acknowledgement: a crash in between tells it again rather than never. A
        // callback still running when close gives up leaves the event in the spool, told again later.
        const done = safely(onDeadLetter && (() => onDeadLetter(local.event, told))).then(() => true);
        if (!(await Promise.race([done, stopped]))) {
          setSending(local, false);
          return;
        }
      }
      try {
        await ack(local.id);
      } catch (error) {
        // Recorded all the same; the entry may be sent again by a later run, under the same key.
        report(error, local.event);
      }
      settled(local, reason ? 'deadLettered' : 'recorded');
    } finally {
      active--;
      end();
      pump();
    }
  }

  function backOff(error: unknown): void {
    failures++;
    generation++;
    paused = true;
    probing = true;
    const retryAfterMs = error instanceof APIError ? error.retryAfterMs : undefined;
    begin();
    clock
      .sleep(trackerBackoff(failures, retryAfterMs), stop.signal, () => new Error('stopped'))
      .catch(() => {})
      .then(() => {
        paused = false;
        end();
        pump();
      });
  }

  // Lifecycle ---------------------------------------------------------------------------------------

  /** Opens the spool once (again after a failed open), then starts the loop: leftovers come first. */
  function start(): Promise<void> {
    opening ??= spool.open().then(
      () => {
        if (phase === 'new') phase = 'running';
        pump();
      },
      (error: unknown) => {
        opening = undefined;
        throw error;
      },
    );
    return opening;
  }

  function closedError(): UsageTrackerError {
    return new UsageTrackerError(
      'closed',
      'usageTracker.track: the tracker is closed; the event was not queued',
    );
  }

  async function track(event: UsageWriteParams): Promise<{ event_key: string }> {
    if (phase === 'closing' || phase === 'closed') throw closedError();
    const checked = check('usageTracker.track', event, usageWriteRules) as unknown as UsageWriteParams;
    const event_key = checked.event_key ?? randomUUID();
    const spooled = { ...checked, event_key } as SpooledEvent;
    const sum = aggregator !== undefined && checked.event_key === undefined && checked.metadata === undefined;
    const since = clock.now();
    await start();
    if (phase !== 'running') throw closedError();
    const wait = room();
    if (wait) await wait;
    if (phase !== 'running') {
      // close began while this call waited for room: refused, so close's flush sees every event it must.
      reserved--;
      grantRoom();
      throw closedError();
    }
    let ids: string[];
    // Known before the append resolves: a take may hand the entry first.
    if (sum) summable.add(event_key);
    const appended = spool.append([spooled]);
    appending.add(appended);
    try {
      ids = await appended;
    } catch (error) {
      summable.delete(event_key);
      throw error;
    } finally {
      appending.delete(appended);
      reserved--;
      grantRoom();
    }
    const id = ids[0] as string;
    if (!locals.has(id)) addLocal({ id, event: spooled, weight: 1, since, handed: false, sending: false });
    else (locals.get(id) as Local).since = since;
    tell('queued');
    wakeSoon();
    return { event_key };
  }

  /** Resolves once none of `ids` is known here any more (recorded, dead-lettered or sent elsewhere). */
  function settledAll(ids: Iterable<string>): Promise<void> {
    const remaining = new Set([...ids].filter((id) => locals.has(id)));
    if (!remaining.size) return Promise.resolve();
    return new Promise((resolve) => flushWaiters.add({ remaining, resolve }));
  }

  async function flush(): Promise<void> {
    if (phase === 'closed') return;
    flushing++;
    try {
      const sent = (async () => {
        await start();
        await leftoversHanded;
        await Promise.allSettled([...appending]);
        aggregator?.formAll();
        await settledAll(locals.keys());
        return true;
      })();
      // A flush still waiting when close gives up would wait for ever: it fails instead, typed.
      if (!(await Promise.race([sent, stopped]))) {
        throw new UsageTrackerError(
          'closed',
          `usageTracker.flush: the tracker was closed with ${queuedWeight + inFlightWeight} events unsent`,
        );
      }
    } finally {
      flushing--;
    }
  }

  let closing: Promise<TrackerCloseResult> | undefined;

  function close(closeOptions?: TrackerCloseOptions): Promise<TrackerCloseResult> {
    let timeoutMs: number;
    try {
      ({ timeoutMs = DEFAULT_CLOSE_TIMEOUT_MS } = check(
        'usageTracker.close',
        closeOptions,
        { timeoutMs: [nonNegative] },
        undefined,
        'options.',
      ) as TrackerCloseOptions);
    } catch (error) {
      return Promise.reject(error);
    }
    closing ??= shutDown(timeoutMs);
    return closing;
  }

  async function shutDown(timeoutMs: number): Promise<TrackerCloseResult> {
    const wasStarted = opening !== undefined;
    phase = 'closing';
    for (const waiter of roomWaiters.splice(0)) waiter.reject(closedError());
    if (!wasStarted) {
      phase = 'closed';
      return { unsent: 0 };
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await opening;
      const deadline = new Promise<void>((resolve) => {
        if (timeoutMs <= MAX_TIMER_MS) timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([flush(), deadline]);
    } catch (error) {
      report(error); // the spool never opened: nothing of ours is in it
      phase = 'closed';
      return { unsent: 0 };
    } finally {
      clearTimeout(timer);
    }
    // Whatever is still under way is abandoned: aborted sends stay in the spool, unsent.
    stop.abort();
    aggregator?.stop();
    if (idleTimer) clearTimeout(idleTimer);
    await whenQuiet();
    phase = 'closed';
    const unsent = queuedWeight + inFlightWeight;
    try {
      await spool.close();
    } catch (error) {
      report(error);
    }
    return { unsent };
  }

  function stats(): TrackerStats {
    let oldest = Number.POSITIVE_INFINITY;
    for (const local of locals.values()) if (local.since < oldest) oldest = local.since;
    return {
      queued: queuedWeight,
      inFlight: inFlightWeight,
      recorded,
      deadLettered,
      retries,
      oldestQueuedMs: locals.size ? Math.max(0, clock.now() - oldest) : 0,
    };
  }

  return { track, flush, close, stats };
}

// The tracker's own error, exported beside it (its class lives with the others in errors.ts).
