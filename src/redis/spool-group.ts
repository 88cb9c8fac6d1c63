import { unref } from '../util/timers.js';
import { LEAVE, OPEN, RENEW } from './lua/spool.js';
import type { RedisClock } from './spool-clock.js';
import { chunked, type SpoolStream } from './spool-stream.js';

/**
 * Makes the consumer group if it is missing (from the stream's start) and drops the names of dead
 * consumers that hold nothing; the reply's Redis time feeds `clock`. Rejects with the client's error.
 */
export async function openGroup(spool: SpoolStream, clock: RedisClock): Promise<void> {
  const sent = performance.now();
  clock.sample(sent, await spool.run(OPEN, [spool.group, spool.consumer, spool.claimIdleMs]));
}

/** On close: this consumer leaves the group if it holds nothing. Best effort, never rejects. */
export async function leaveGroup(spool: SpoolStream): Promise<void> {
  try {
    await spool.run(LEAVE, [spool.group, spool.consumer]);
  } catch {
    // A consumer left in the group holds nothing and is removed by a later open.
  }
}

/**
 * Starts the heartbeat: every third of the claim time, the entries this consumer holds get their
 * idle time reset, so no other instance claims them while this one works on them. Returns the
 * function that stops it. Its timer never keeps the process alive: the tracker's close ends the work.
 */
export function startHeartbeat(spool: SpoolStream): () => void {
  let renewing = false;
  const renew = async (): Promise<void> => {
    if (renewing || spool.held.size === 0) return;
    renewing = true;
    try {
      await chunked(spool, RENEW, [spool.group, spool.consumer], [...spool.held]);
    } catch {
      // Renewal is best effort: if Redis is unreachable, no other instance can claim either; if
      // entries are claimed anyway, their keys keep the second send from counting twice.
    } finally {
      renewing = false;
    }
  };
  const every = Math.max(10, Math.floor(spool.claimIdleMs / 3));
  const heartbeat = unref(setInterval(() => void renew(), every));
  return () => clearInterval(heartbeat);
}
