import type { Spool, SpoolEntry, SpooledEvent } from './spool.js';
import { SpoolCore } from './spool-core.js';
import { checkStorable } from './storable-event.js';

/** Ids of a memory spool: `m` and the entry's place in append order. */
const ID = /^m(\d{1,15})$/;

/** The fields of a usage event, in the order {@link serialise} writes their values. */
const FIELDS = ['account_ref_id', 'product_code', 'meter_code', 'quantity', 'event_key', 'metadata'] as const;
const KNOWN = new Set<string>(FIELDS);

/**
 * An event as the memory spool keeps it: the JSON array of its fields' values, in {@link FIELDS}
 * order (`["acct_1","api-gateway","api_calls",1,"<key>"]`, half the bytes of the object's JSON),
 * or the object's JSON when it has a field of another name.
 */
function serialise(event: SpooledEvent): string {
  for (const key in event) if (!KNOWN.has(key)) return JSON.stringify(event);
  const { account_ref_id, product_code, meter_code, quantity, event_key, metadata } = event;
  const values: unknown[] = [account_ref_id, product_code, meter_code, quantity, event_key];
  // A value JSON cannot tell from a missing one (undefined and null both write null): as an object.
  if (values.some((v) => v === undefined || v === null) || metadata === null) return JSON.stringify(event);
  if (metadata !== undefined) values.push(metadata);
  return JSON.stringify(values);
}

/** The event {@link serialise} wrote: a new object, so no one shares it. */
function deserialise(json: string): SpooledEvent {
  const parsed = JSON.parse(json) as unknown;
  if (!Array.isArray(parsed)) return parsed as SpooledEvent;
  const event: Record<string, unknown> = {};
  FIELDS.forEach((field, i) => {
    if (i < parsed.length) event[field] = parsed[i];
  });
  return event as unknown as SpooledEvent;
}

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
 * A queued event is small and flat: its JSON text, serialised once when appended (a copy, so a
 * caller changing its object after `track` changes nothing, as with a file or Redis spool), in one
 * array slot; no object per event survives the append. A queue of 100 000 costs about 20 MB less
 * than the objects would, and the garbage collector has almost nothing to copy.
 *
 * @example
 * ```ts
 * import { BillingClient, createUsageTracker, memorySpool } from 'billing-sdk';
 *
 * const tracker = createUsageTracker(new BillingClient(), { spool: memorySpool() });
 * ```
 */
export function memorySpool(): Spool {
  // The entries in append order (an aggregate goes to the end, as new): the event's JSON, or
  // undefined once acknowledged. Slot i is the entry `m${base + i}`.
  let slots: (string | undefined)[] = [];
  let base = 1;
  /** Entries not acknowledged. */
  let live = 0;
  /** The next entry to hand in this session (an absolute position, like the ids). */
  let head = 1;
  const core = new SpoolCore({ name: 'memorySpool', place: '', transient: () => false });

  const store = (event: SpooledEvent): string => {
    const json = serialise(event);
    // V8 builds a long string in parts: read once, it is made one flat string and the parts are
    // freed (about 100 bytes less for each event queued).
    json.charCodeAt(0);
    slots.push(json);
    live++;
    return `m${base + slots.length - 1}`;
  };
  /** The slot of `id`, or -1 when it is no entry of this spool (any more). */
  const slotOf = (id: string): number => {
    const match = ID.exec(id);
    if (!match) return -1;
    const slot = Number(match[1]) - base;
    return slot >= 0 && slot < slots.length ? slot : -1;
  };
  const remove = (id: string): void => {
    const slot = slotOf(id);
    if (slot < 0 || slots[slot] === undefined) return;
    slots[slot] = undefined;
    live--;
  };
  /** Drops the acknowledged prefix once it is most of the array, so a long run does not keep every slot. */
  const compact = (): void => {
    let dead = 0;
    while (dead < slots.length && slots[dead] === undefined && base + dead < head) dead++;
    if (dead > 1024 && dead * 2 > slots.length) {
      slots = slots.slice(dead);
      base += dead;
    }
  };

  return {
    durable: false,
    open: () =>
      core.open(async () => {
        // A new session: everything not acknowledged is handed again, oldest first.
        head = base;
      }),
    async append(events) {
      core.check('append');
      checkStorable('memorySpool.append', events);
      return events.map(store);
    },
    async take(max) {
      core.check('take');
      const out: SpoolEntry[] = [];
      while (out.length < max && head < base + slots.length) {
        const position = head++;
        const json = slots[position - base];
        if (json !== undefined) out.push({ id: `m${position}`, event: deserialise(json) });
      }
      compact();
      return out;
    },
    async ack(ids) {
      core.check('ack');
      for (const id of ids) remove(id);
    },
    async replace(members, aggregate) {
      core.check('replace');
      // One synchronous step: nothing can observe the members gone and the aggregate missing.
      for (const id of members) remove(id);
      return store(aggregate);
    },
    async pending(ids) {
      core.check('pending');
      return ids.filter((id) => {
        const slot = slotOf(id);
        return slot >= 0 && slots[slot] !== undefined;
      });
    },
    async size() {
      core.check('size');
      return live;
    },
    close: () => core.close(async () => {}),
  };
}
