import { describe, expect, it } from 'vitest';
import { createMockApp, MockFaults, seededRandom, startMockServer } from '../../src/testing/index.js';
import { client } from './helpers.js';

/** A random source that returns the given numbers in order, and fails the test when they run out. */
function scripted(...values: number[]): () => number {
  return () => {
    const next = values.shift();
    if (next === undefined) throw new Error('no scripted random number left');
    return next;
  };
}

describe('seededRandom', () => {
  it('repeats its sequence for a seed, in [0, 1), and differs between seeds', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const first = Array.from({ length: 1000 }, a);
    expect(Array.from({ length: 1000 }, b)).toEqual(first);
    for (const x of first) expect(x >= 0 && x < 1).toBe(true);
    expect(Array.from({ length: 10 }, seededRandom(43))).not.toEqual(first.slice(0, 10));
    // Spread well enough for fault rates: the mean of 1000 draws is near 0.5.
    const mean = first.reduce((sum, x) => sum + x, 0) / first.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.05);
  });
});

describe('Fault.probability', () => {
  it('fires when the draw is below it; otherwise the next matching fault is tried', () => {
    const faults = new MockFaults({ random: scripted(0.7, 0.2) });
    const sometimes = { status: 503, probability: 0.5, times: 1 };
    const always = { status: 429 };
    faults.add(sometimes);
    faults.add(always);
    // 0.7 >= 0.5: skipped, keeps its use; the next fault fires.
    expect(faults.take('GET', '/api/products/')).toBe(always);
    expect(faults.pending()).toEqual([sometimes]);
    // 0.2 < 0.5: fires and is used up.
    expect(faults.take('GET', '/api/products/')).toBe(sometimes);
    expect(faults.size).toBe(0);
  });

  it('draws only for a probability strictly between 0 and 1, and only for matching faults', () => {
    const faults = new MockFaults({ random: scripted(0.99) });
    faults.add({ method: 'POST', status: 500, probability: 0.5 });
    faults.add({ status: 500, probability: 0 });
    faults.add({ status: 502, probability: 0.5 });
    faults.add({ status: 503 });
    // The POST-only fault does not match a GET; 0 never fires; 0.99 misses 0.5; 503 always fires.
    expect(faults.take('GET', '/api/x/')?.status).toBe(503);
  });

  it('lets a request through to the real handler when no fault fires', async () => {
    const app = createMockApp({ random: scripted(0.95, 0.05) });
    app.faults.add({ status: 503, probability: 0.1, times: Number.POSITIVE_INFINITY });
    const get = () => app.fetch('http://127.0.0.1/api/products/', { headers: { 'x-api-key': app.apiKey } });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(503);
  });

  it('over HTTP: a seeded soak of one fault fires at about its rate, the same way every run', async () => {
    const run = async () => {
      const server = await startMockServer({ random: seededRandom(7) });
      try {
        server.faults.add({ status: 503, probability: 0.3, times: Number.POSITIVE_INFINITY });
        const api = client(server);
        const statuses: number[] = [];
        for (let i = 0; i < 200; i++) statuses.push((await api.get('products/')).status);
        return statuses;
      } finally {
        await server.close();
      }
    };
    const first = await run();
    expect(await run()).toEqual(first);
    const fired = first.filter((s) => s === 503).length;
    expect(fired).toBeGreaterThan(30);
    expect(fired).toBeLessThan(90);
    expect(first.filter((s) => s !== 503 && s !== 200)).toEqual([]);
  });

  it('rejects a probability outside 0..1', () => {
    const faults = new MockFaults();
    expect(() => faults.add({ status: 500, probability: -0.1 })).toThrow(RangeError);
    expect(() => faults.add({ status: 500, probability: 1.5 })).toThrow(RangeError);
    expect(() => faults.add({ status: 500, probability: Number.NaN })).toThrow(RangeError);
    faults.add({ status: 500, probability: 0 });
    faults.add({ status: 500, probability: 1 });
    expect(faults.size).toBe(2);
  });
});
