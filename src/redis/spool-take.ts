import type { SpoolEntry } from '../tracker/spool.js';
import { parseSpooledEvent } from '../tracker/spooled-event.js';
import { ACK, TAKE } from './lua/spool.js';
import { isGone, type StreamLoss, streamLost } from './spool-loss.js';
import { oddReply, type SpoolStream } from './spool-stream.js';
import { withdrawWindowMs } from './spool-withdraw.js';

/**
 * The `take` of a `redisSpool`, one step at a time (two at once would read the same own pending
 * entries): this consumer's own pending entries first (what it held before a restart), then
 * entries other consumers left idle past the claim time, then new ones (with `waitReplicas`, only
 * those appended longer ago than {@link withdrawWindowMs}). Keeps its cursors in both
 * pending lists between takes. When the stream or group was deleted under it (FLUSHALL, a Redis
 * without persistence restarted), `reopen` makes the group again, `loss` keeps when, and the take
 * rejects with {@link streamLost} (the next take goes on). Rejects with the client's error, or
 * {@link oddReply} on a reply of another shape. What the spool handed already
 * (an entry of ours XAUTOCLAIM took back after a late renewal) is the spool's `Handout` to drop.
 */
export function taker(
  spool: SpoolStream,
  reopen: () => Promise<number>,
  loss: StreamLoss,
): (max: number) => Promise<SpoolEntry[]> {
  /** Cursor in this consumer's own pending entries, `''` once they were all handed out. */
  let ownCursor = '0';
  let claimCursor = '0-0';
  const freshAfter = withdrawWindowMs(spool);

  return async (max) => {
    const args = [spool.group, spool.consumer, max, ownCursor, spool.claimIdleMs, claimCursor, freshAfter];
    let reply: unknown;
    try {
      reply = await spool.run(TAKE, args);
    } catch (error) {
      if (!isGone(error)) throw error;
      // Made again for what comes next; what was in it is gone, and is said so (never in silence).
      loss.before = await reopen();
      ownCursor = '0';
      claimCursor = '0-0';
      throw streamLost('take', spool.stream, error);
    }
    if (!Array.isArray(reply) || reply.length % 2 !== 0) throw oddReply('take', reply);
    ownCursor = String(reply[0]);
    claimCursor = String(reply[1]);
    const entries: SpoolEntry[] = [];
    const unreadable: string[] = [];
    for (let i = 2; i < reply.length; i += 2) {
      const id = String(reply[i]);
      const event = parseSpooledEvent(reply[i + 1]);
      if (!event) unreadable.push(id);
      else entries.push({ id, event });
    }
    // Not an event a spool wrote: left pending, it would be claimed and fail again for ever.
    if (unreadable.length) await spool.run(ACK, [spool.group, ...unreadable]).catch(() => {});
    return entries;
  };
}
