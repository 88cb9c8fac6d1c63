import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createWebhookHandler, type DedupeStore, memoryDedupeStore } from '../../src/index.js';
import { realClock } from '../../src/util/clock.js';
import { MAX_TIMER_MS } from '../../src/util/timers.js';
import { event } from '../webhooks/event.js';

const DAY = 24 * 60 * 60 * 1000;
const stopped = () => new Error('stopped');

describe('realClock.sleep: the one sleep of the SDK (fake timers)', () => {
  let delays: number[];
  beforeEach(() => {
    vi.useFakeTimers();
    delays = [];
    const schedule = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      delays.push(ms ?? 0);
      return schedule(fn, ms);
    }) as typeof setTimeout);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it('waits 30 days in chunks that setTimeout keeps, and not a moment less', async () => {
    let done = false;
    const sleeping = realClock.sleep(30 * DAY, undefined, stopped).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(30 * DAY - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await sleeping;
    expect(done).toBe(true);
    // Two timers (24.8 days, then the rest), never one that overflows to 1 ms and spins.
    expect(delays).toHaveLength(2);
    expect(delays.every((ms) => ms <= MAX_TIMER_MS)).toBe(true);
    expect(delays.reduce((a, b) => a + b, 0)).toBe(30 * DAY);
  });

  it('waits Infinity until its signal aborts, then rejects with onAbort and leaves no timer', async () => {
    const controller = new AbortController();
    let outcome: unknown;
    const sleeping = realClock.sleep(Number.POSITIVE_INFINITY, controller.signal, stopped).catch((error) => {
      outcome = error;
    });
    await vi.advanceTimersByTimeAsync(100 * DAY);
    expect(outcome).toBeUndefined();
    expect(delays.length).toBeLessThanOrEqual(5); // one timer per 24.8 days: no busy loop
    controller.abort();
    await sleeping;
    expect((outcome as Error).message).toBe('stopped');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a signal aborted mid-way through a long wait cancels it; an aborted one rejects at once', async () => {
    const controller = new AbortController();
    const sleeping = realClock.sleep(40 * DAY, controller.signal, stopped);
    await vi.advanceTimersByTimeAsync(26 * DAY); // into the second chunk
    controller.abort();
    await expect(sleeping).rejects.toThrow('stopped');
    expect(vi.getTimerCount()).toBe(0);
    await expect(realClock.sleep(10, controller.signal, stopped)).rejects.toThrow('stopped');
  });

  it('a wait of 0, a negative one or NaN ends at once without a timer', async () => {
    for (const ms of [0, -5, Number.NaN]) await realClock.sleep(ms, undefined, stopped);
    expect(delays).toHaveLength(0);
  });
});

describe('every sleep goes through it', () => {
  it("the webhook claim's renewal (a third of claimTtlMs) never overflows a timer", async () => {
    let renewals = 0;
    const store = memoryDedupeStore();
    const dedupe: DedupeStore = {
      claim: (id, token, ttlMs) => store.claim(id, token, ttlMs),
      renew: (id, token, ttlMs) => {
        renewals++;
        return store.renew(id, token, ttlMs);
      },
      complete: (id, token) => store.complete(id, token),
      release: (id, token) => store.release(id, token),
    };
    // A third of 1e10 ms is past MAX_TIMER_MS: a bare setTimeout would renew every millisecond.
    const handler = createWebhookHandler({
      dedupe,
      claimTtlMs: 1e10,
      onEvent: () => new Promise<void>((resolve) => setTimeout(resolve, 100)),
    });
    const answer = await handler(new Request('http://x/', { method: 'POST', body: JSON.stringify(event()) }));
    expect(answer.status).toBe(200);
    expect(renewals).toBe(0);
  });
});
