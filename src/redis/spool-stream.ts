import { SpoolError } from '../core/errors/index.js';
import { inChunks } from '../tracker/spool-core.js';
import type { ReplicaWait } from './replica-wait.js';

/**
 * `redisSpool`'s stream when none is named, as the spool uses it on its own (a script, a test);
 * a tracker or relay uses {@link serviceStream} instead. Earlier releases used it for every
 * service: what is left there is sent with `billing-sdk relay --stream billing-sdk:usage`.
 */
export const DEFAULT_STREAM = 'billing-sdk:usage';

/**
 * The stream of a `redisSpool` with no `stream` given, in a tracker (or relay) of the service
 * `service` (its namespace: a digest of API key and base URL): two services sharing one Redis
 * with default options never send each other's events.
 */
export const serviceStream = (service: string): string => `${DEFAULT_STREAM}:${service}`;

/** Whether `key` is a default stream: a service's ({@link serviceStream}) or the bare one. */
export const isDefaultStream = (key: string): boolean =>
  key === DEFAULT_STREAM || /^billing-sdk:usage:[0-9a-f]{32}$/.test(key);

/**
 * What the parts of one `redisSpool` share: where its entries are, who it is in the group, and
 * how to run a script on the stream (every script's one key is the stream, so it runs on Redis
 * Cluster as is).
 */
export interface SpoolStream {
  /** The stream's key. */
  readonly stream: string;
  /** The consumer group of every instance sending the stream's events. */
  readonly group: string;
  /** This spool's consumer name in the group. */
  readonly consumer: string;
  /** How long an entry may go without a sign of life from its holder before another claims it, in ms. */
  readonly claimIdleMs: number;
  /** How long a step waits for Redis, in ms. */
  readonly timeoutMs: number;
  /** Runs one of lua/spool.ts's scripts on the stream; rejects with the client's error or on the timeout. */
  run(script: string, args: (string | number)[]): Promise<unknown>;
  /** How many replicas must confirm an append or a replace (0: none asked), and for how long WAIT waits. */
  readonly replicas: ReplicaWait;
  /**
   * WAIT on the connection that ran the spool's scripts: how many replicas hold its writes so far.
   * Rejects with the client's error or on the timeout.
   */
  confirm(): Promise<number>;
}

/** Runs `ids` through `script` (after the `head` arguments) in chunks; answers the chunks' array replies, flattened. */
export function chunked(
  spool: SpoolStream,
  script: string,
  head: (string | number)[],
  ids: readonly string[],
): Promise<unknown[]> {
  return inChunks(ids, async (chunk) => {
    const reply = await spool.run(script, [...head, ...chunk]);
    return Array.isArray(reply) ? reply : [];
  });
}

/** The {@link SpoolError} `'io'` of a reply of a shape the step never gives (another program's key, an odd adapter). */
export function oddReply(operation: string, reply: unknown): SpoolError {
  return new SpoolError('io', `redisSpool.${operation}: unexpected Redis reply ${JSON.stringify(reply)}`);
}
