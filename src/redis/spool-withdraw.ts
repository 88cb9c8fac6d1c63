import { SpoolError } from '../core/errors/index.js';
import { inChunks } from '../tracker/spool-core.js';
import { WITHDRAW } from './lua/spool.js';
import type { SpoolStream } from './spool-stream.js';

/**
 * With `waitReplicas`, what an append or a replace waits for before it resolves: WAIT, on the
 * connection that ran it, confirming that many replicas hold the write. Resolves at once without
 * the option. Otherwise rejects with a {@link SpoolError} `'not_replicated'`: the master has the
 * write, but a failover now could lose it, so it is not claimed as stored.
 *
 * An append's entries are then withdrawn (deleted while no consumer was handed them), so a caller
 * told it failed does not see it recorded anyway in the common case of a replica merely slow or
 * down. What cannot be withdrawn (handed to an instance meanwhile, Redis unreachable) may still be
 * recorded, under the event's key, which a retried `track` with that key makes count once. A
 * replace is left as it is: its members were acknowledged in the same step, so a retried replace
 * finds them gone (a `'conflict'`), and the aggregate stays in the stream to be sent.
 */
export async function replicated(
  spool: SpoolStream,
  operation: 'append' | 'replace',
  ids: readonly string[],
): Promise<void> {
  const { replicas, timeoutMs } = spool.replicas;
  if (replicas === 0) return;
  let confirmed: number | undefined;
  let cause: unknown;
  try {
    confirmed = await spool.confirm();
    if (confirmed >= replicas) return;
  } catch (error) {
    cause = error;
  }
  const shortfall =
    confirmed === undefined
      ? `WAIT failed (${cause instanceof Error ? cause.message : String(cause)})`
      : `${confirmed} of ${replicas} replica(s) confirmed it within ${timeoutMs} ms`;
  const fate = operation === 'append' ? await withdraw(spool, ids) : replaceFate;
  throw new SpoolError(
    'not_replicated',
    `redisSpool ${operation} on stream ${spool.stream}: written on the master, but ${shortfall}: ${fate}`,
    cause === undefined ? undefined : { cause },
  );
}

const replaceFate =
  'a failover could bring the members back in place of the aggregate; the aggregate stays in the stream';

/**
 * With `waitReplicas`, how old a new entry must be before any instance takes it, in ms: WAIT's
 * timeout and up to 500 ms for its answer and the withdrawal to reach Redis. An append whose
 * replicas did not confirm it withdraws its entries within that time, before anyone could send
 * them; 0 without the option. Every instance sharing a stream should use the same `waitReplicas`:
 * one without it takes new entries at once.
 */
export function withdrawWindowMs(spool: SpoolStream): number {
  const { replicas, timeoutMs } = spool.replicas;
  return replicas > 0 ? timeoutMs + Math.min(spool.timeoutMs, 500) : 0;
}

/** Deletes the entries no consumer was handed yet; says what became of them. Never rejects. */
async function withdraw(spool: SpoolStream, ids: readonly string[]): Promise<string> {
  try {
    // In chunks, as acks are: bounds how long one script holds Redis.
    const counts = await inChunks(ids, async (chunk) => [
      Number(await spool.run(WITHDRAW, [spool.group, ...chunk])),
    ]);
    const handed = counts.reduce((sum, n) => sum + n, 0);
    if (handed === 0) return 'withdrawn, nothing will be sent';
    return `${handed} of ${ids.length} already handed to an instance may still be recorded under their event_key; the others were withdrawn`;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return `not withdrawn (${why}): they may still be recorded under their event_key`;
  }
}
