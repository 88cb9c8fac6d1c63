/**
 * Error replies that say Redis cannot serve the step right now, not that the step is wrong: still
 * loading its data set, busy with a script, a replica written to or cut off from its master (a
 * failover under way), a cluster without a slot's node, out of memory.
 */
const TRANSIENT = new Set([
  'LOADING',
  'BUSY',
  'MASTERDOWN',
  'READONLY',
  'NOREPLICAS',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'OOM',
]);

/**
 * The code of a Redis error reply (`WRONGTYPE`, `ERR`, `NOSCRIPT`…), read from the message the way
 * every client passes it on (node-redis's `ErrorReply`, ioredis's `ReplyError`), or `undefined`
 * when `error` is no reply: a socket error, a closed client, a timeout. Node's socket errors
 * (`syscall` set) are never replies, whatever their message.
 */
export function replyCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || 'syscall' in error) return undefined;
  return /^([A-Z][A-Z_-]*[A-Z]) /.exec(error.message)?.[1];
}

/**
 * Connection or reply: whether a Redis failure may pass when tried again (no answer in time, a lost
 * connection, a server loading or failing over), or Redis refused the step for good (a key of
 * another type, a command the server lacks). The one classifier of `billing-sdk/redis`: a spool's
 * `'unavailable'` (else `'io'`) and a store's `'unavailable'` (else `'unexpected_reply'`) are both this.
 */
export function isTransient(error: unknown): boolean {
  const code = replyCode(error);
  return code === undefined || TRANSIENT.has(code);
}
