import { LEAVE, OPEN, RENEW } from './lua/spool.js';
import type { RedisClock } from './spool-clock.js';
import { chunked, type SpoolStream } from './spool-stream.js';

/**
 * Makes the consumer group if it is missing (from the stream's start) and drops the names of dead
 * consumers that hold nothing; the reply's Redis time feeds `clock` and is the answer (ms). Rejects
 * with the client's error.
 */
export async function openGroup(spool: SpoolStream, clock: RedisClock): Promise<number> {
  const sent = performance.now();
  const now = await spool.run(OPEN, [spool.group, spool.consumer, spool.claimIdleMs]);
  clock.sample(sent, now);
  return Number(now);
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
 * The heartbeat's beat (run by the spool's `Handout` every third of the claim time): the entries
 * this consumer holds get their idle time reset, so no other instance claims them while this one
 * works on them. Rejects with the client's error (the next beat tries again).
 */
export async function renew(spool: SpoolStream, held: readonly string[]): Promise<void> {
  await chunked(spool, RENEW, [spool.group, spool.consumer], held);
}
