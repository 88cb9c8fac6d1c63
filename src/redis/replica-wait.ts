import { integer } from '../internal/checks.js';
import { MAX_TIMER_MS } from '../util/timers.js';
import type { CommandRunner } from './adapt.js';

/** How many replicas `waitReplicas` may ask for: more than any deployment runs, less than a typo's worth. */
const MAX_REPLICAS = 1_000;

/** Default of `waitTimeoutMs`: how long WAIT may wait for the replicas, in ms. */
export const WAIT_TIMEOUT_MS = 1_000;

/** The rules of the `waitReplicas` and `waitTimeoutMs` options, shared by the spool and the dedupe store. */
export const replicaRules = {
  waitReplicas: [integer(0, MAX_REPLICAS)],
  waitTimeoutMs: [integer(1, MAX_TIMER_MS)],
};

/** What `waitReplicas` and `waitTimeoutMs` resolve to, defaults applied. */
export interface ReplicaWait {
  /** How many replicas must confirm a write; 0: none asked (no WAIT sent). */
  readonly replicas: number;
  /** How long WAIT may wait for them, in ms. */
  readonly timeoutMs: number;
}

/** The options' values, defaults applied (checked beforehand with {@link replicaRules}). */
export function replicaWait(options: {
  waitReplicas?: number | undefined;
  waitTimeoutMs?: number | undefined;
}): ReplicaWait {
  return { replicas: options.waitReplicas ?? 0, timeoutMs: options.waitTimeoutMs ?? WAIT_TIMEOUT_MS };
}

/**
 * How many replicas hold every write the connection sent so far: Redis's `WAIT replicas timeout`,
 * which answers once `replicas` acknowledged them or after `timeoutMs`, with the count. WAIT counts
 * for the writes of the connection it runs on, so it must follow the write on the same connection
 * (a node-redis or ioredis client of one node has one; a cluster client's connection to the node
 * owning `key`). Rejects with the client's error (a replica answering it, say), or a plain `Error`
 * when no answer came within `timeoutMs + answerMs` (a server frozen, a client reconnecting).
 */
export function confirmedReplicas(
  runner: CommandRunner,
  key: string,
  wait: ReplicaWait,
  answerMs: number,
): Promise<number> {
  const command = ['WAIT', String(wait.replicas), String(wait.timeoutMs)];
  // On a cluster the runner sends it to the master serving `key`, on the connection its write used.
  const reply = runner.send(command, key);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Redis did not answer WAIT within ${wait.timeoutMs + answerMs} ms`)),
      wait.timeoutMs + answerMs,
    );
    reply.then(
      (count) => {
        clearTimeout(timer);
        if (typeof count === 'number' && Number.isInteger(count)) resolve(count);
        else
          reject(new Error(`unexpected Redis reply to WAIT: ${String(JSON.stringify(count)).slice(0, 200)}`));
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
