import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { APIUserAbortError, InvalidRequestError, type UsageWriteParams } from '../../src/index.js';
import { caught, clientFor, until, useMockServer } from '../helpers.js';

const mock = useMockServer();
const meter = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };
const total = () => mock.server.store.usageTotal(meter.account_ref_id, meter.product_code, meter.meter_code);
const events = (n: number, quantity = 1): UsageWriteParams[] =>
  Array.from({ length: n }, () => ({ ...meter, quantity }));

describe('usage.recordMany', () => {
  it('records every event once and lists the results in input order, each with its key', async () => {
    const before = total();
    const batch = events(30).map((e, i) => ({ ...e, quantity: i + 1 }));
    const results = await clientFor(mock.server).usage.recordMany(batch, { concurrency: 5 });
    expect(results).toHaveLength(30);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.map((r) => (r.ok && r.result.accepted ? r.result.recorded_quantity : 0))).toEqual(
      batch.map((e) => e.quantity),
    );
    expect(new Set(results.map((r) => r.event_key)).size).toBe(30);
    expect(total()).toBe(before + (30 * 31) / 2);
  });

  it('keeps the keys it is given, and sends each event under its key', async () => {
    const batch = events(3).map((e, i) => ({ ...e, event_key: `job-7-line-${i}` }));
    const results = await clientFor(mock.server).usage.recordMany(batch);
    expect(results.map((r) => r.event_key)).toEqual(['job-7-line-0', 'job-7-line-1', 'job-7-line-2']);
    const sent = mock.server.requests.all().map((r) => (r.body as { event_key: string }).event_key);
    expect(sent.sort()).toEqual(['job-7-line-0', 'job-7-line-1', 'job-7-line-2']);
  });

  it('one bad event is its own typed error; the others are recorded', async () => {
    const batch = events(5);
    batch[2] = { ...meter, quantity: 0 };
    const results = await clientFor(mock.server).usage.recordMany(batch);
    expect(results.map((r) => r.ok)).toEqual([true, true, false, true, true]);
    const bad = results[2];
    expect(bad?.ok === false && bad.error).toBeInstanceOf(InvalidRequestError);
    expect(bad?.event_key).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a key given but not a non-empty string refuses the batch, naming it, before anything is sent', async () => {
    const before = total();
    for (const bad of [42, '', null, { id: 1 }]) {
      const batch = events(3).map((e, i) => ({ ...e, event_key: `run-${i}` }));
      (batch[1] as Record<string, unknown>).event_key = bad;
      const error = await caught(() => clientFor(mock.server).usage.recordMany(batch));
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual(['events[1].event_key']);
    }
    expect(mock.server.requests.all()).toHaveLength(0);
    expect(total()).toBe(before);
    // A missing key (absent or undefined) still gets one generated.
    const results = await clientFor(mock.server).usage.recordMany([
      { ...meter, quantity: 1, event_key: undefined },
    ]);
    expect(results[0]?.ok).toBe(true);
    expect(results[0]?.event_key).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('under lost answers and 503s, every event is recorded exactly once', async () => {
    const before = total();
    const common = { method: 'POST', path: '/api/usage/events/', times: Number.POSITIVE_INFINITY };
    mock.server.faults.add({ ...common, probability: 0.2, reset: 'after' });
    mock.server.faults.add({ ...common, probability: 0.2, status: 503 });
    const results = await clientFor(mock.server, { maxRetries: 10 }).usage.recordMany(events(100), {
      concurrency: 10,
    });
    expect(results.every((r) => r.ok)).toBe(true);
    expect(total()).toBe(before + 100);
  });

  it('an aborted batch settles every event; resubmitting the same keys completes it exactly once', async () => {
    const before = total();
    const controller = new AbortController();
    const batch = events(40);
    const first = await clientFor(mock.server).usage.recordMany(batch, {
      concurrency: 4,
      signal: controller.signal,
      onProgress: ({ done }) => {
        if (done === 10) controller.abort();
      },
    });
    expect(first).toHaveLength(40);
    const aborted = first.filter((r) => !r.ok);
    expect(aborted.length).toBeGreaterThan(20);
    expect(aborted.every((r) => !r.ok && r.error instanceof APIUserAbortError)).toBe(true);
    // Resume: every event again, under the keys the first run reported.
    const resumed = await clientFor(mock.server).usage.recordMany(
      batch.map((e, i) => ({ ...e, event_key: first[i]?.event_key })),
      { concurrency: 8 },
    );
    expect(resumed.every((r) => r.ok)).toBe(true);
    expect(total()).toBe(before + 40);
  });

  it('a signal shared by the whole batch does not collect a listener per event in flight', async () => {
    // Node warns past ten listeners on one signal; sixteen events in flight must not trip it.
    const controller = new AbortController();
    mock.server.faults.add({ path: '/api/usage/events/', delayMs: 200, times: 16 });
    const batch = clientFor(mock.server).usage.recordMany(events(32), {
      concurrency: 16,
      signal: controller.signal,
    });
    await until(() => mock.server.requests.count() >= 16);
    expect(getEventListeners(controller.signal, 'abort').length).toBeLessThanOrEqual(1);
    const results = await batch;
    expect(results.every((r) => r.ok)).toBe(true);
  });

  it('reports progress as done/total, ending at total', async () => {
    const seen: string[] = [];
    await clientFor(mock.server).usage.recordMany(events(6), {
      concurrency: 2,
      onProgress: ({ done, total: all }) => seen.push(`${done}/${all}`),
    });
    expect(seen).toEqual(['1/6', '2/6', '3/6', '4/6', '5/6', '6/6']);
  });

  it.each([
    [{ concurrency: 0 }, 'options.concurrency'],
    [{ onProgress: 'yes' }, 'options.onProgress'],
    [{ signal: {} }, 'options.signal'],
    [{ timout: 5 }, 'options.timout'],
  ])('refuses options %o before sending anything', async (options, field) => {
    const err = (await caught(() =>
      clientFor(mock.server).usage.recordMany(events(3), options as never),
    )) as InvalidRequestError;
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.issues.map((i) => i.field)).toEqual([field]);
    expect(mock.server.requests.count()).toBe(0);
  });

  it('refuses events that are not an array', async () => {
    expect(await caught(() => clientFor(mock.server).usage.recordMany({} as never))).toBeInstanceOf(
      InvalidRequestError,
    );
  });
});
