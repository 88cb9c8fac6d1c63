import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AccessEvent,
  createAccessCache,
  createGate,
  createUsageTracker,
  type GateEvent,
  type TrackerEvent,
} from '../../src/index.js';
import { cacheWithClock, manualClock } from '../access/helpers.js';
import { clientFor, instantClock, until, useMockServer } from '../helpers.js';
import { METER, PREPAID, withTrackerClock } from '../tracker/support.js';

const mock = useMockServer();

/** Records every message of a plain channel until the test ends. */
function listen<T>(name: string): T[] {
  const seen: T[] = [];
  const onMessage = (message: unknown) => void seen.push(message as T);
  diagnostics.subscribe(name, onMessage);
  stops.push(() => diagnostics.unsubscribe(name, onMessage));
  return seen;
}
const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

describe('billing-sdk:access', () => {
  it('publishes miss, refresh, hit, stale, invalidate and error, with the operation and no account', async () => {
    const events = listen<AccessEvent>('billing-sdk:access');
    const clock = manualClock();
    const access = cacheWithClock(
      clientFor(mock.server, { maxRetries: 0 }),
      { ttlMs: 1_000, staleMs: 60_000 },
      clock,
    );
    const lookup = { account_ref_id: 'acct_active' };
    await access.isActive(lookup); // miss + refresh
    await access.isActive(lookup); // hit
    await access.hasEntitlement({ ...lookup, product_code: 'ai-assistant', entitlement_code: 'export' });
    clock.advance(1_500);
    mock.server.faults.add({ path: '/api/account/acct_active/status/', status: 503 });
    await access.isActive(lookup); // stale, and its refresh fails
    await until(() => events.some((e) => e.event === 'error')); // the refresh runs in the background
    await access.invalidate('acct_active');
    // A refresh starts inside the lookup that needs it, so it is published before that lookup's outcome.
    expect(events.map((e) => [e.event, e.operation])).toEqual([
      ['refresh', 'accounts.status'],
      ['miss', 'accounts.status'],
      ['hit', 'accounts.status'],
      ['refresh', 'entitlements.check'],
      ['miss', 'entitlements.check'],
      ['refresh', 'accounts.status'],
      ['stale', 'accounts.status'],
      ['error', 'accounts.status'],
      ['invalidate', undefined],
    ]);
    expect(JSON.stringify(events)).not.toContain('acct_active');
    const stats = access.stats();
    expect(events.filter((e) => e.event === 'hit')).toHaveLength(stats.hits);
    expect(events.filter((e) => e.event === 'refresh')).toHaveLength(stats.refreshes);
    await access.close();
  });

  it("publishes the gate's decisions, allowed and refused, with where the answer came from and no account", async () => {
    const events = listen<AccessEvent | GateEvent>('billing-sdk:access');
    const billing = clientFor(mock.server, { maxRetries: 0 });
    const access = createAccessCache(billing);
    const gate = createGate({
      billing,
      access,
      account: (r: Request) => r.headers.get('x-account') ?? undefined,
    });
    const asking = (account: string) =>
      new Request('http://app.local/', { headers: { 'x-account': account } });
    const need = { subscription: 'pro-plan' };
    expect((await gate.check(asking('acct_active'), need)).allowed).toBe(true); // asked the service
    expect((await gate.check(asking('acct_active'), need)).allowed).toBe(true); // from memory
    expect((await gate.check(asking('acct_empty'), need)).allowed).toBe(false);
    const decisions = events.filter((e) => e.event === 'decision');
    expect(decisions).toEqual([
      { event: 'decision', allowed: true, source: 'live', needs: ['subscription'] },
      { event: 'decision', allowed: true, source: 'cache', needs: ['subscription'] },
      { event: 'decision', allowed: false, reason: 'inactive', needs: ['subscription'] },
    ]);
    expect(JSON.stringify(events)).not.toContain('acct_');
    await access.close();
  });
});

describe('billing-sdk:tracker', () => {
  it('publishes queued, retry, sent and dead-letter with the queue depth after each step', async () => {
    const events = listen<TrackerEvent>('billing-sdk:tracker');
    mock.server.faults.add({ path: '/api/usage/events/', status: 503 });
    const tracker = createUsageTracker(
      clientFor(mock.server, { maxRetries: 0 }),
      withTrackerClock({ concurrency: 1, onDeadLetter: () => {} }, instantClock()),
    );
    await tracker.track({ ...METER, quantity: 1 });
    await tracker.track({ ...METER, quantity: 2 });
    await tracker.track({ ...PREPAID, quantity: 1 }); // refused: invalid_usage_model
    await tracker.flush();
    await tracker.close();
    const queued = events.filter((e) => e.event === 'queued');
    expect(queued).toHaveLength(3);
    expect(events.filter((e) => e.event === 'retry')).toHaveLength(1);
    expect(events.filter((e) => e.event === 'sent')).toHaveLength(2);
    expect(events.filter((e) => e.event === 'dead-letter')).toHaveLength(1);
    // Depth: each queued event counts itself and what was not yet settled; the last step leaves none.
    expect(queued.map((e) => e.queued + e.inFlight)).toEqual(
      [1, 2, 3].map((n, i) => n - countSettledBefore(events, i)),
    );
    const last = events.at(-1);
    expect(last).toMatchObject({ queued: 0, inFlight: 0 });
    expect(tracker.stats()).toMatchObject({ recorded: 2, deadLettered: 1, retries: 1 });
  });
});

/** Events settled (sent or dead-lettered) before the `i`-th queued event was published. */
function countSettledBefore(events: TrackerEvent[], i: number): number {
  let queued = -1;
  let settled = 0;
  for (const e of events) {
    if (e.event === 'queued' && ++queued === i) return settled;
    if (e.event === 'sent' || e.event === 'dead-letter') settled++;
  }
  return settled;
}
