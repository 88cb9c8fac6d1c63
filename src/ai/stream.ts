import type { CallEnd, Charge } from './charge.js';
import { estimateTokens } from './price.js';
import type { AIUsage } from './types.js';

/**
 * What a wire format's stream reader keeps of a streamed call while the caller reads it: the
 * characters of output delivered (for an estimate) and the usage the provider reported so far.
 */
export interface Watcher<T> {
  /** Reads one item; `false` hides it from the caller (the usage-only chunk the meter asked for). */
  see(item: T): boolean;
  /** Characters of output (text, reasoning, tool arguments) seen so far. */
  readonly chars: number;
  /** The usage the provider reported so far (all of it once the stream completed), if any. */
  usage(): AIUsage | undefined;
  /**
   * Whether all that is left of the stream is its usage report (chat's usage chunk, which the
   * meter asks for): a caller leaving now is charged that report, read on its behalf, not an estimate.
   */
  due?(): boolean;
}

/** The most items read on a leaving caller's behalf for a usage report that is due. */
const DUE_READS = 4;

/** An abort of the caller's, as the provider libraries and the platform name it. */
export const isAbort = (error: unknown): boolean => {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'APIUserAbortError';
};

/**
 * Charges a streamed call as it ended. Completed: what the provider reported (an estimate from the
 * text when it reported nothing). Cancelled by the consumer, or failed after some output: what the
 * provider reported so far, its output raised to the estimate of the text delivered, flagged
 * estimated when the estimate counted. Failed before any output: nothing.
 */
export function chargeStream<T>(charge: Charge, watcher: Watcher<T>, how: CallEnd): Promise<void> {
  const reported = watcher.usage();
  const chars = watcher.chars;
  if (how === 'completed' && reported) return charge.end(reported, how);
  if (how === 'failed' && chars === 0) return charge.fail();
  const output = estimateTokens(chars);
  if (reported) {
    if (reported.output >= output) return charge.end(reported, how);
    return charge.end({ ...reported, output }, how, true);
  }
  if (chars === 0)
    return charge.end({ input: 0, output: 0, cachedInput: 0, cacheWrite: 0, reasoning: 0 }, how);
  return charge.end(
    { input: charge.estimatedInput(), output, cachedInput: 0, cacheWrite: 0, reasoning: 0 },
    how,
    true,
  );
}

/**
 * Charges a whole (not streamed) answer: what the provider reported, else an estimate from the
 * prompt and the `chars` of output it answered (flagged), as a stream that completed unreported is.
 */
export function chargeWhole(charge: Charge, reported: AIUsage | undefined, chars: number): Promise<void> {
  return chargeStream(charge, { chars, usage: () => reported, see: () => true }, 'completed');
}

/** The caller's iterator, and how to end it from outside (an abort seen on the request's signal). */
export interface MeteredIterator<T> extends AsyncIterableIterator<T> {
  return(value?: unknown): Promise<IteratorResult<T>>;
  throw(error?: unknown): Promise<IteratorResult<T>>;
  end(how: CallEnd): Promise<void>;
  /** Whether a `next()` is under way: its answer will end the call, an abort seen meanwhile need not. */
  readonly reading: boolean;
}

/**
 * The caller's iterator over a provider's stream, charging the call once it is done with: read to
 * its end, left by the caller (`break`, `return`), failed, or aborted (`aborted()` says so, the
 * error may not). The charge is awaited before the last `next()` or `return()` resolves, so a caller
 * that read the stream knows it was charged. Items the watcher hides are skipped.
 */
export function meterIterator<T>(
  source: AsyncIterator<T>,
  watcher: Watcher<T>,
  charge: Charge,
  aborted: () => boolean,
): MeteredIterator<T> {
  let over: Promise<void> | undefined;
  const end = (how: CallEnd): Promise<void> => {
    over ??= chargeStream(charge, watcher, how);
    return over;
  };
  let reading = false;
  // Items read since the hold's keeper last asked: a stream nobody reads lets its hold go.
  let items = 0;
  let heard = -1;
  charge.keepWhile(() => {
    const moved = reading || items !== heard;
    heard = items;
    return moved;
  });
  const done = { done: true, value: undefined } as IteratorResult<T>;
  // A promise chain, not an async function: one promise per item on the caller's path.
  const failed = async (error: unknown): Promise<IteratorResult<T>> => {
    reading = false;
    // Not `aborted()`: a client aborts its own request when its stream fails.
    await end(isAbort(error) ? 'cancelled' : 'failed');
    throw error;
  };
  const read = (): Promise<IteratorResult<T>> => {
    reading = true;
    return source.next().then(got, failed);
  };
  const got = (r: IteratorResult<T>): IteratorResult<T> | Promise<IteratorResult<T>> => {
    reading = false;
    items++;
    // A client whose request the caller aborted may end the stream quietly.
    if (r.done) return end(aborted() ? 'cancelled' : 'completed').then(() => r);
    if (!watcher.see(r.value)) return read();
    if (watcher.chars > 0) charge.progress(watcher.chars);
    return r;
  };
  return {
    end,
    get reading() {
      return reading;
    },
    next(): Promise<IteratorResult<T>> {
      // Ended from outside (an abort while nobody read): done once the charge is.
      if (over) return over.then(() => done);
      return read();
    },
    async return(value?: unknown): Promise<IteratorResult<T>> {
      // The caller left at its answer's end (`finish_reason`): the report follows at once.
      try {
        for (let i = 0; i < DUE_READS && !over && watcher.due?.(); i++) {
          const r = await source.next();
          if (r.done) break;
          watcher.see(r.value);
        }
      } catch {
        // The stream failed after the answer: charged as it stands.
      }
      const charged = end('cancelled');
      try {
        await source.return?.();
      } finally {
        await charged;
      }
      return { done: true, value: value as T };
    },
    // As the clients' own iterators (async generators) do: the stream is left, the error thrown back.
    async throw(error?: unknown): Promise<IteratorResult<T>> {
      await this.return();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** {@link meterIterator} over a `ReadableStream` (the AI SDK's model streams), as a `ReadableStream`. */
export function meterReadable<T>(
  source: ReadableStream<T>,
  watcher: Watcher<T>,
  charge: Charge,
  aborted: () => boolean,
): ReadableStream<T> {
  const reader = source.getReader();
  const it = meterIterator<T>(
    {
      next: () => reader.read() as Promise<IteratorResult<T>>,
      return: async () => {
        await reader.cancel();
        return { done: true, value: undefined };
      },
    },
    watcher,
    charge,
    aborted,
  );
  return new ReadableStream<T>(
    {
      async pull(controller) {
        const r = await it.next();
        if (r.done) controller.close();
        else controller.enqueue(r.value);
      },
      async cancel() {
        await it.return();
      },
    },
    { highWaterMark: 0 },
  );
}
