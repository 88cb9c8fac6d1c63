import type { AccessStore } from '../access/store.js';
import { StoreError } from '../core/errors/index.js';
import { safely } from '../util/safely.js';
import { unref } from '../util/timers.js';
import { replyText } from './client.js';
import { storeFailure, unexpectedReply } from './store-errors.js';

/** Entries read per poll; a full batch is followed by another poll at once. */
const BATCH = 1_000;
/** While Redis fails, a watcher asks this seldom, so an outage costs one error a second, not forty. */
const BACKOFF_MS = 1_000;
const WHERE = 'redisAccessStore.watch';

/** What a watch needs of its store. */
export interface WatchSource {
  /**
   * Runs the `POLL` script (lua/access.ts) with its ARGV: a token for a missing epoch, the cursor
   * (`''` to only learn where the stream is), how many entries at most. Rejects with a {@link StoreError}.
   */
  poll(args: (string | number)[]): Promise<unknown>;
  /** How long between two polls, in ms. */
  pollMs: number;
}

/** One invalidation read from the stream: its id, account and number (NaN when missing). */
interface Entry {
  id: string;
  account: string | undefined;
  n: number;
}

/** XREAD's reply `[[stream, [[id, [field, value, ...]], ...]]]` (or null) as entries. */
function parseEntries(reply: unknown): Entry[] {
  if (reply == null || reply === false) return [];
  const streams = Array.isArray(reply) ? reply : [];
  const items = Array.isArray(streams[0]) && Array.isArray(streams[0][1]) ? (streams[0][1] as unknown[]) : [];
  return items.map((item) => {
    const [rawId, rawFields] = Array.isArray(item) ? item : [];
    const id = replyText(rawId);
    if (id === undefined) throw unexpectedReply(WHERE, reply);
    const fields = Array.isArray(rawFields) ? rawFields.map(replyText) : [];
    let account: string | undefined;
    let n = Number.NaN;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      if (fields[i] === 'a') account = fields[i + 1];
      else if (fields[i] === 'n') n = Number(fields[i + 1]);
    }
    return { id, account, n };
  });
}

/**
 * `AccessStore.watch` of `redisAccessStore`: polls the stream of invalidations every `pollMs` with
 * a non-blocking read and tells `listener` each account, in order. A stream keeps what was sent
 * while this instance was cut off, so the cursor resumes after a reconnect; when invalidations may
 * have been missed (the stream was trimmed past the cursor, Redis lost its data, or the first poll
 * failed), `listener` hears `undefined`: drop every answer. Failures go to `onError` as
 * {@link StoreError}s, and the watch backs off to a poll a second until Redis answers again.
 * Returns the stop function; its timers never keep a process alive.
 */
export function watchInvalidations(
  source: WatchSource,
  listener: Parameters<AccessStore['watch']>[0],
  onError: Parameters<AccessStore['watch']>[1],
): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Where the watch is: the data set's epoch, the id and number of the last invalidation seen.
  let epoch: string | undefined;
  let cursor = '0-0';
  let seen = 0;
  // Invalidations sent while the first poll failed happened after watch() was called, and
  // nothing tells which: once the first poll succeeds, the listener hears they may be missed.
  let failedBeforeStart = false;

  const tell = (account: string | undefined) => {
    try {
      listener(account);
    } catch (error) {
      void safely(() => onError(error));
    }
  };

  /** One poll; resolves true when a full batch came (more may be waiting). */
  const poll = async (): Promise<boolean> => {
    const reply = await source.poll([crypto.randomUUID(), epoch === undefined ? '' : cursor, BATCH]);
    const [rawEpoch, rawN, rawLast, rawEntries] = Array.isArray(reply) ? reply : [];
    const now = replyText(rawEpoch);
    const n = Number(replyText(rawN) ?? rawN);
    const lastId = replyText(rawLast);
    if (now === undefined || lastId === undefined || !Number.isSafeInteger(n)) {
      throw unexpectedReply(WHERE, reply);
    }
    if (now !== epoch) {
      // The first poll, or Redis lost its data (restart, failover) with whatever invalidations
      // it held: start from where the stream is now, everything before it being unknown.
      const restarted = epoch !== undefined || failedBeforeStart;
      epoch = now;
      cursor = lastId;
      seen = n;
      if (restarted) tell(undefined);
      return false;
    }
    const entries = parseEntries(rawEntries);
    let lost = false;
    const accounts: string[] = [];
    for (const entry of entries) {
      // Invalidations are numbered 1, 2, 3…: a jump means the stream was trimmed past the cursor.
      if (entry.n !== seen + 1 || entry.account === undefined) lost = true;
      else accounts.push(entry.account);
      seen = Number.isSafeInteger(entry.n) ? entry.n : seen;
      cursor = entry.id;
    }
    const full = entries.length >= BATCH;
    // Every entry up to now was read, yet the count differs: some were deleted unread (the
    // stream was trimmed to nothing past the cursor, or deleted).
    if (!full && seen !== n) {
      lost = true;
      seen = n;
      cursor = lastId;
    }
    if (lost) tell(undefined);
    else for (const account of accounts) tell(account);
    return full;
  };

  const loop = async () => {
    if (stopped) return;
    let delay = source.pollMs;
    try {
      if (await poll()) delay = 0;
    } catch (error) {
      if (epoch === undefined) failedBeforeStart = true;
      delay = Math.max(source.pollMs, BACKOFF_MS);
      const failure = error instanceof StoreError ? error : storeFailure(WHERE, error);
      if (!stopped) void safely(() => onError(failure));
    }
    if (!stopped) timer = unref(setTimeout(loop, delay));
  };
  timer = unref(setTimeout(loop, 0));

  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
