import { SpoolError } from '../core/errors/index.js';
import { replyCode } from './failure.js';

/**
 * What a `redisSpool` knows of its stream's loss: the Redis time (ms) when it found the stream or
 * its group gone, `0` while never. Entries older than that may have gone with it: `pending` answers
 * them as still there rather than acknowledged by another instance.
 */
export interface StreamLoss {
  before: number;
}

/** Whether `error` is Redis saying the stream or the consumer group does not exist. */
export const isGone = (error: unknown): boolean => replyCode(error) === 'NOGROUP';

/**
 * The {@link SpoolError} `'lost'` of a stream or group found gone: what was appended before and not
 * sent is not in Redis any more, and is never counted as sent.
 */
export function streamLost(operation: string, stream: string, cause: unknown): SpoolError {
  return new SpoolError(
    'lost',
    `redisSpool.${operation} on stream ${stream}: the stream or its consumer group is gone (FLUSHALL, a restart without persistence, an eviction, a failover to an empty replica); events appended before and not yet sent are not in Redis any more and are counted unsent; the group was made again for new events`,
    { cause },
  );
}
