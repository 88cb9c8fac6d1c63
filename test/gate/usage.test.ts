import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUsageTracker, type GateRequest, memorySpool, type UsageTracker } from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { until, useMockServer } from '../helpers.js';
import {
  A,
  ask,
  FRAMEWORKS,
  GW,
  header,
  PAST_DUE,
  PRO,
  type Route,
  type Served,
  setupFor,
  USAGE,
} from './helpers.js';

// Usage through each adapter: tracked after a 2xx answer only, never for a failed or refused request.
const mock = useMockServer();
/** Usage events recorded since the seed (which has some of its own). */
const events = () => mock.server.store.usageEvents.filter((e) => !seeded.has(e.event_key));
let seeded = new Set<string>();
beforeEach(() => {
  seeded = new Set(mock.server.store.usageEvents.map((e) => e.event_key));
});

describe.each(FRAMEWORKS)('usage through $name', (framework) => {
  let open: Served[] = [];
  let trackers: UsageTracker[] = [];
  afterEach(async () => {
    await Promise.all(open.map((s) => s.close()));
    await Promise.all(trackers.map((t) => t.close()));
    open = [];
    trackers = [];
  });
  const start = async (route: Route): Promise<{ served: Served; tracker: UsageTracker }> => {
    const setup = setupFor(mock.server);
    const tracker = createUsageTracker(setup.billing, { spool: memorySpool() });
    trackers.push(tracker);
    const served = await framework.serve({ ...setup, tracker }, route);
    open.push(served);
    return { served, tracker };
  };
  /** Waits until `n` events were handed to the tracker, then until the service recorded them. */
  const settled = async (tracker: UsageTracker, n: number) => {
    await until(() => {
      const stats = tracker.stats();
      return stats.queued + stats.inFlight + stats.recorded + stats.deadLettered >= n;
    });
    await tracker.flush();
  };

  it('tracks a 2xx answer: 200 and 201 each once, with the quantity read from the request', async () => {
    const need = [
      PRO,
      {
        usage: {
          product_code: GW,
          meter_code: DEMO.meters.apiCalls,
          quantity: (request: GateRequest) => Number(header(request, 'x-units') ?? '1'),
        },
      },
    ];
    const { served, tracker } = await start({ need });
    expect((await ask(served, { account: A, headers: { 'x-units': '3' } })).status).toBe(200);
    expect((await ask(served, { account: A, status: 201, headers: { 'x-units': '4' } })).status).toBe(201);
    await settled(tracker, 2);
    const recorded = events().map((e) => [e.account_ref_id, e.product_code, e.meter_code, e.quantity]);
    expect(recorded).toHaveLength(2);
    expect(recorded).toEqual(
      expect.arrayContaining([
        [A, GW, 'api_calls', 3],
        [A, GW, 'api_calls', 4],
      ]),
    );
  });

  it('a 500 answer, a throwing handler and a refused request track nothing', async () => {
    const { served, tracker } = await start({ need: [PRO, USAGE] });
    expect((await ask(served, { account: A, status: 500 })).status).toBe(500);
    expect((await ask(served, { account: A, throws: true })).status).toBe(500);
    expect((await ask(served, { account: PAST_DUE })).status).toBe(402);
    expect(served.handled).toBe(2);
    expect(served.errors).toEqual([expect.objectContaining({ message: 'handler failed' })]);
    // A 2xx answer last: once its event is in, the answers before it were long finished.
    expect((await ask(served, { account: A })).status).toBe(200);
    await settled(tracker, 1);
    expect(events()).toHaveLength(1);
    expect(tracker.stats()).toMatchObject({ recorded: 1, deadLettered: 0, queued: 0 });
  });
});
