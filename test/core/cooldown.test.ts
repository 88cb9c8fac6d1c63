import { afterEach, describe, expect, it } from 'vitest';
import { type CooldownGrant, memoryCooldown } from '../../src/core/cooldown.js';
import { MAX_COOLDOWN_MS, RateLimitError } from '../../src/index.js';
import type { Clock } from '../../src/util/clock.js';
import {
  caught,
  clientFor,
  instantClock,
  recordTraces,
  type TraceEvent,
  until,
  useMockServer,
} from '../helpers.js';

type Release = Extract<CooldownGrant, { release: unknown }>;
const released = (grant: CooldownGrant | Promise<CooldownGrant>): Release => {
  if (grant instanceof Promise || 'waitMs' in grant)
    throw new Error(`expected a grant, got ${JSON.stringify(grant)}`);
  return grant;
};

describe('memoryCooldown (times given explicitly)', () => {
  it('lets everything through until a 429 with Retry-After', () => {
    const cooldown = memoryCooldown();
    for (let i = 0; i < 5; i++) released(cooldown.acquire(0)).release(1, undefined);
    expect('release' in (cooldown.acquire(2) as CooldownGrant)).toBe(true);
  });

  it('after a 429: everyone waits the window, then one probe goes while the rest wait for its answer', async () => {
    const cooldown = memoryCooldown();
    const burst = [released(cooldown.acquire(0)), released(cooldown.acquire(0))];
    burst[0]?.release(10, 1000); // until 1010
    burst[1]?.release(20, 1000); // a later 429 extends it: until 1020
    expect(cooldown.acquire(500)).toEqual({ waitMs: 520 });
    const probe = released(cooldown.acquire(1020));
    const waiting = cooldown.acquire(1021);
    expect(waiting).toBeInstanceOf(Promise);
    // The probe is refused again: the waiters learn it and wait out the new window.
    probe.release(1030, 1000);
    expect(await waiting).toEqual({ waitMs: 0 });
    expect(cooldown.acquire(1031)).toEqual({ waitMs: 999 });
    // The next probe succeeds: the cooldown is over for everyone.
    const second = released(cooldown.acquire(2030));
    const queued = cooldown.acquire(2031);
    second.release(2040, undefined);
    expect(await queued).toEqual({ waitMs: 0 });
    expect('release' in (cooldown.acquire(2041) as CooldownGrant)).toBe(true);
  });

  it('a 429 without Retry-After starts no cooldown (backoff handles it)', () => {
    const cooldown = memoryCooldown();
    released(cooldown.acquire(0)).release(1, undefined);
    expect('release' in (cooldown.acquire(2) as CooldownGrant)).toBe(true);
  });
});

const mock = useMockServer();

/**
 * The attempts that started before the `n`th attempt ended. A request the cooldown holds starts no
 * attempt, and the probe's grant is released only after its attempt ended, so "held until the probe
 * is answered" reads as: two attempts start (the 429 and the probe) before the second ends, and
 * every other after it. No pause: the order is the SDK's own.
 */
function startedBeforeEnd(events: readonly TraceEvent[], n: number): number {
  let ends = 0;
  let starts = 0;
  for (const { channel, event } of events) {
    if (channel !== 'billing-sdk:attempt') continue;
    if (event === 'asyncEnd' && ++ends === n) return starts;
    if (event === 'start') starts += 1;
  }
  throw new Error(`only ${ends} attempts ended`);
}

let recording: ReturnType<typeof recordTraces> | undefined;
afterEach(() => recording?.stop());
const balance = { account_ref_id: 'acct_active', product_code: 'ai-assistant', meter_code: 'credits' };

/** Sends request A, which meets a 429 with Retry-After; its retry is the probe, slowed by `probeMs`. */
async function startCooldown(billing: ReturnType<typeof clientFor>, probeMs: number) {
  mock.server.faults.add({ path: '/api/usage/', status: 429, headers: { 'retry-after': '1' } });
  mock.server.faults.add({ path: '/api/usage/', delayMs: probeMs });
  const first = billing.usage.balance(balance);
  await until(() => mock.server.requests.count() === 2); // the 429, then the probe in flight
  // Wrapped: an async function returning the call's promise would wait for it to settle.
  return { first };
}

describe('one cooldown per client, over HTTP', () => {
  it('a 429 with Retry-After holds every other request of the client until the probe is answered', async () => {
    recording = recordTraces();
    const billing = clientFor(mock.server, {}, instantClock());
    const { first } = await startCooldown(billing, 300);
    const others = Array.from({ length: 10 }, () => billing.usage.balance(balance));
    await Promise.all([first, ...others]);
    expect(recording.count('billing-sdk:attempt', 'start')).toBe(12);
    expect(startedBeforeEnd(recording.events, 2)).toBe(2); // nothing sent while the probe is out
    expect(mock.server.requests.count()).toBe(12);
  });

  it('clients given the same cooldown share it; clients without it do not', async () => {
    const clock = instantClock();
    const cooldown = memoryCooldown();
    const a = clientFor(mock.server, { cooldown }, clock);
    const b = clientFor(mock.server, { cooldown }, clock);
    const stranger = clientFor(mock.server, {}, clock);
    const { first } = await startCooldown(a, 300);
    const shared = Array.from({ length: 5 }, () => b.usage.balance(balance));
    await stranger.usage.balance(balance); // its own cooldown: not held
    expect(mock.server.requests.count()).toBe(3);
    await Promise.all([first, ...shared]);
    expect(mock.server.requests.count()).toBe(8);
  });

  it('withOptions clients share their parent’s cooldown', async () => {
    const clock = instantClock();
    const parent = clientFor(mock.server, {}, clock);
    const child = parent.withOptions({ timeout: 5_000 });
    recording = recordTraces();
    const { first } = await startCooldown(parent, 300);
    const held = child.usage.balance(balance);
    await Promise.all([first, held]);
    expect(recording.count('billing-sdk:attempt', 'start')).toBe(3);
    expect(startedBeforeEnd(recording.events, 2)).toBe(2); // the child's waited for the parent's probe
    expect(mock.server.requests.count()).toBe(3);
  });

  it('a request the cooldown would hold longer than maxRetryDelay fails at once with RateLimitError, nothing sent', async () => {
    mock.server.faults.add({ path: '/api/usage/', status: 429, headers: { 'retry-after': '30' } });
    const billing = clientFor(mock.server, { maxRetryDelay: 5_000 });
    const first = (await caught(() => billing.usage.balance(balance))) as RateLimitError;
    expect(first.retryAfterMs).toBe(30_000);
    const next = (await caught(() => billing.usage.balance(balance))) as RateLimitError;
    expect(next).toBeInstanceOf(RateLimitError);
    expect(next.retryAfterMs).toBeGreaterThan(25_000);
    expect(next.message).toContain('nothing was sent');
    expect(mock.server.requests.count()).toBe(1);
  });

  it('a Retry-After of ten years cools the client for an hour at most, never a lock-out', async () => {
    mock.server.faults.add({ path: '/api/usage/', status: 429, headers: { 'retry-after': '315360000' } });
    let later = 0;
    const waits: number[] = [];
    const clock: Clock = {
      now: () => Date.now() + later,
      sleep: async (ms) => {
        waits.push(ms);
        later += ms;
      },
    };
    const billing = clientFor(mock.server, {}, clock);
    const first = (await caught(() => billing.usage.balance(balance))) as RateLimitError;
    expect(first.retryAfterMs).toBe(315_360_000_000);
    // Held longer than maxRetryDelay: a RateLimitError at once, carrying the wait left (an hour at most).
    const next = (await caught(() => billing.usage.balance(balance))) as RateLimitError;
    expect(next).toBeInstanceOf(RateLimitError);
    expect(next.retryAfterMs).toBeGreaterThan(0);
    expect(next.retryAfterMs).toBeLessThanOrEqual(MAX_COOLDOWN_MS);
    expect(mock.server.requests.count()).toBe(1);
    // A client that waits as long as it takes waits the hour (not ten years), then goes as the probe.
    const patient = billing.withOptions({ maxRetryDelay: Number.POSITIVE_INFINITY });
    await expect(patient.usage.balance(balance)).resolves.toBeDefined();
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeLessThanOrEqual(MAX_COOLDOWN_MS);
    expect(mock.server.requests.count()).toBe(2);
  });

  it('in a 429 storm, the service sees one request per window, not one per request in flight', async () => {
    const billing = clientFor(mock.server, { maxRetries: 10 }, instantClock());
    mock.server.faults.add({ path: '/api/usage/', status: 429, headers: { 'retry-after': '1' } });
    // Four more windows of refusals, each probe slowed so that a second request could overlap it.
    mock.server.faults.add({
      path: '/api/usage/',
      status: 429,
      headers: { 'retry-after': '1' },
      delayMs: 50,
      times: 4,
    });
    const first = billing.usage.balance(balance);
    await until(() => mock.server.requests.count() >= 2);
    const others = Array.from({ length: 10 }, () => billing.usage.balance(balance));
    let overlap = 0;
    const sampler = setInterval(() => {
      overlap = Math.max(overlap, mock.server.activeRequests());
    }, 5);
    await Promise.all([first, ...others]);
    clearInterval(sampler);
    // 1 refused, 4 refused probes, 1 accepted probe, then the 10 others.
    expect(mock.server.requests.count()).toBe(16);
    expect(overlap).toBeLessThanOrEqual(1);
  });
});
