import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/util/clock.js';
import { Stop } from '../../src/util/stop.js';

describe("Stop (the switch usable from any request context: the tracker, a claim's renewals)", () => {
  it('hands each step a fresh signal that aborts when it stops, and forgets it once the step is done', async () => {
    const stop = new Stop();
    const seen: AbortSignal[] = [];
    await stop.signal(async (signal) => {
      seen.push(signal);
    });
    let during: AbortSignal | undefined;
    const pending = stop.signal(
      (signal) =>
        new Promise<string>((resolve) => {
          during = signal;
          signal.addEventListener('abort', () => resolve('aborted'));
        }),
    );
    stop.abort();
    expect(await pending).toBe('aborted');
    expect(seen[0]?.aborted, 'a finished step is not aborted later').toBe(false);
    expect(seen[0]).not.toBe(during);
    expect(stop.aborted).toBe(true);
    // After the stop, a new step starts already aborted.
    expect(await stop.signal(async (signal) => signal.aborted)).toBe(true);
  });

  it('race answers the value, or false once stopped, and rejects with the promise', async () => {
    const stop = new Stop();
    expect(await stop.race(Promise.resolve(7))).toBe(7);
    await expect(stop.race(Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const never = stop.race(new Promise<number>(() => {}));
    stop.abort();
    expect(await never).toBe(false);
    expect(await stop.race(Promise.resolve(1))).toBe(false);
  });

  it('a promise raced after the stop that rejects later is never left unhandled', async () => {
    // close({ timeoutMs: 0 }) stops first, then flush races its work: that work failing later
    // (its Postgres shut down: read ECONNRESET, seen in CI) must not become an unhandled rejection.
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const stop = new Stop();
      stop.abort();
      let fail!: (error: Error) => void;
      const work = new Promise<number>((_, reject) => (fail = reject));
      expect(await stop.race(work)).toBe(false);
      fail(new Error('read ECONNRESET'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it("cancels the SDK's one sleep as an AbortSignal does, and forgets a finished sleep's listener", async () => {
    const stopped = new Error('stopped');
    const stop = new Stop();
    // A finished sleep leaves nothing behind: aborting later calls no stale listener.
    await realClock.sleep(1, stop, () => stopped);
    const waiting = realClock.sleep(60_000, stop, () => stopped, true);
    const started = performance.now();
    stop.abort();
    await expect(waiting).rejects.toBe(stopped);
    expect(performance.now() - started).toBeLessThan(1_000);
    // Already stopped: a new sleep rejects at once.
    await expect(realClock.sleep(60_000, stop, () => stopped)).rejects.toBe(stopped);
  });
});
