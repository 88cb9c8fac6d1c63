import type { Spool, SpoolEntry, SpooledEvent } from './spool.js';
import { SpoolCore } from './spool-core.js';
import { checkStorable } from './storable-event.js';

/**
 * A {@link Spool} in this process's memory: the usage tracker's default. Fast (an append costs
 * microseconds) and NOT durable: what is not sent when the process dies is lost with it. Use
 * `fileSpool(dir)` (`billing-sdk/node`) or `redisSpool(client)` (`billing-sdk/redis`) where usage
 * must survive a crash or a deploy.
 *
 * The same object opened again after `close()` hands its unacknowledged entries first, as a durable
 * spool does after a restart: a tracker closed before it could send everything can pass what is
 * left to the next tracker of the same process.
 *
 * @example
 * ```ts
 * import { BillingClient, createUsageTracker, memorySpool } from 'billing-sdk';
 *
 * const tracker = createUsageTracker(new BillingClient(), { spool: memorySpool() });
 * ```
 */
export function memorySpool(): Spool {
  // Maps iterate in insertion order: the order of append (an aggregate goes to the end, as new).
  const entries = new Map<string, SpooledEvent>();
  // Ids not handed yet in this session, in order; an id acknowledged meanwhile is skipped when reached.
  let queue: string[] = [];
  let head = 0;
  let nextId = 1;
  const core = new SpoolCore({ name: 'memorySpool', place: '', transient: () => false });
  // A copy, so a caller changing its object after `track` does not change what is sent (a file or
  // Redis spool serialises it; memory must not behave differently).
  const store = (event: SpooledEvent): string => {
    const id = `m${nextId++}`;
    // Only `metadata` is nested: the rest is copied by the spread.
    entries.set(id, event.metadata ? { ...event, metadata: structuredClone(event.metadata) } : { ...event });
    queue.push(id);
    return id;
  };

  return {
    durable: false,
    open: () =>
      core.open(async () => {
        // A new session: everything not acknowledged is handed again, oldest first.
        queue = [...entries.keys()];
        head = 0;
      }),
    async append(events) {
      core.check('append');
      checkStorable('memorySpool.append', events);
      return events.map(store);
    },
    async take(max) {
      core.check('take');
      const out: SpoolEntry[] = [];
      while (out.length < max && head < queue.length) {
        const id = queue[head++] as string;
        const event = entries.get(id);
        if (event) out.push({ id, event: structuredClone(event) });
      }
      // Drop the handed prefix once it is most of the array, so a long run does not keep every id.
      if (head > 1024 && head * 2 > queue.length) {
        queue = queue.slice(head);
        head = 0;
      }
      return out;
    },
    async ack(ids) {
      core.check('ack');
      for (const id of ids) entries.delete(id);
    },
    async replace(members, aggregate) {
      core.check('replace');
      // One synchronous step: nothing can observe the members gone and the aggregate missing.
      for (const id of members) entries.delete(id);
      return store(aggregate);
    },
    async pending(ids) {
      core.check('pending');
      return ids.filter((id) => entries.has(id));
    },
    async size() {
      core.check('size');
      return entries.size;
    },
    close: () => core.close(async () => {}),
  };
}
