import { describe, expect, it, vi } from 'vitest';
import { createAccessCache, createGate } from '../../src/index.js';
import { listenersOf } from '../../src/util/account-changes.js';
import { A, gateOptions } from '../gate/helpers.js';
import { sse, VIEW } from '../gate/state-helpers.js';
import { clientFor, collectGarbage, useMockServer } from '../helpers.js';

// 1,000 open streams on one instance's state handler, then every one closed: nothing left behind
// (no timer, no listener on the access cache or the client) and the memory back where it was.
const mock = useMockServer();
const STREAMS = 1_000;

/** The intervals set and not yet cleared (the heartbeat's is unref'd: Node's active resources leave it out). */
const live = new Set<unknown>();
const timers = () => live.size;
function watchIntervals(): void {
  const set = globalThis.setInterval;
  const clear = globalThis.clearInterval;
  vi.spyOn(globalThis, 'setInterval').mockImplementation(((fn: () => void, ms: number) => {
    const id = set(fn, ms);
    live.add(id);
    return id;
  }) as typeof setInterval);
  vi.spyOn(globalThis, 'clearInterval').mockImplementation(((id: ReturnType<typeof setInterval>) => {
    live.delete(id);
    clear(id);
  }) as typeof clearInterval);
}

describe(`${STREAMS} open streams, then closed`, () => {
  it('leaves no timer, no listener, and the memory as it was', async () => {
    const billing = clientFor(mock.server, { maxRetries: 0 });
    const access = createAccessCache(billing);
    const gate = createGate(
      gateOptions<Request>({ billing, access, signingKey: mock.server.signingKey, paywall: false }),
    );
    const state = gate.state({ ...VIEW, streams: { perAccount: STREAMS, total: STREAMS } });
    const request = (signal: AbortSignal) =>
      new Request('http://app.test/state', {
        headers: { accept: 'text/event-stream', 'x-account': A },
        signal,
      });
    // Warm: the answers in the cache, the code paths loaded, before the baseline.
    for (let round = 0; round < 2; round++) {
      const c = new AbortController();
      await sse(await state.fetch(request(c.signal))).next();
      c.abort();
    }
    await collectGarbage();
    watchIntervals();
    const timersBefore = timers();
    const heapBefore = process.memoryUsage().heapUsed;

    const controllers = Array.from({ length: STREAMS }, () => new AbortController());
    const responses = await Promise.all(controllers.map((c) => state.fetch(request(c.signal))));
    const readers = responses.map((r) => sse(r));
    for (const r of readers) await r.next();
    expect(state.stats()).toEqual({ streams: STREAMS, accounts: 1 });
    // One heartbeat timer and one listener per owner for all of them, not one per stream.
    expect(timers()).toBe(timersBefore + 1);
    expect(listenersOf(access)).toBe(2);
    expect(listenersOf(billing)).toBe(2);
    await collectGarbage();
    const perStream = (process.memoryUsage().heapUsed - heapBefore) / STREAMS;
    console.log(`heap per open stream: ${Math.round(perStream)} B`);

    // Half end by their request's signal, half by the handler's close().
    for (const c of controllers.slice(0, STREAMS / 2)) c.abort();
    expect(state.stats().streams).toBe(STREAMS / 2);
    await state.close();
    expect(state.stats()).toEqual({ streams: 0, accounts: 0 });
    for (const r of readers.slice(STREAMS / 2)) expect(await r.ended()).toBe(true);
    expect(timers()).toBe(timersBefore);
    expect(listenersOf(access)).toBe(0);
    expect(listenersOf(billing)).toBe(0);
    readers.length = 0;
    responses.length = 0;
    controllers.length = 0;
    await collectGarbage();
    const left = process.memoryUsage().heapUsed - heapBefore;
    // Back within 1 MB of the baseline (what the streams held came to `perStream` × 1,000).
    expect(left).toBeLessThan(1_000_000);
    await access.close();
    vi.restoreAllMocks();
  }, 60_000);
});
