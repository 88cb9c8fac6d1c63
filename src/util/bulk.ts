/** How one item of a batch ended. */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Runs `run` over `items` with at most `concurrency` at once, and returns how each ended, in input
 * order: one failure never stops the others, so a batch always accounts for every item.
 * `onSettled` is told after each item (a callback that throws is ignored: it must not cost an item).
 */
export async function runMany<T, R>(
  items: readonly T[],
  run: (item: T, index: number) => Promise<R>,
  concurrency: number,
  onSettled?: (done: number) => void,
): Promise<Settled<R>[]> {
  const out: Settled<R>[] = new Array(items.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        out[index] = { ok: true, value: await run(items[index] as T, index) };
      } catch (error) {
        out[index] = { ok: false, error };
      }
      done++;
      try {
        onSettled?.(done);
      } catch {
        // A progress callback that throws loses its report, never an item.
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}
