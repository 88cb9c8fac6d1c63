/**
 * Groups calls made close together into one: `add(item)` resolves once the call of `run` that
 * included it has settled (rejects with its error). One call runs at a time; items added meanwhile
 * wait and go together in the next, so under load a spool sees a few large acknowledgements rather
 * than one round trip per event (a Redis XACK, a file spool's write).
 */
export function batcher<T>(run: (items: T[]) => Promise<void>): (item: T) => Promise<void> {
  let waiting: { items: T[]; settled: Promise<void> } | undefined;
  let last: Promise<unknown> = Promise.resolve();
  return (item) => {
    if (!waiting) {
      const batch: { items: T[]; settled: Promise<void> } = { items: [], settled: Promise.resolve() };
      // Starts once the call before it settled (at the earliest, after the current turn's adds):
      // whatever was added until then goes in this call.
      batch.settled = last.then(() => {
        if (waiting === batch) waiting = undefined;
        return run(batch.items);
      });
      last = batch.settled.catch(() => {});
      waiting = batch;
    }
    waiting.items.push(item);
    return waiting.settled;
  };
}
