import { describe, expect, it } from 'vitest';
import {
  createWebhookHandler,
  type DedupeStore,
  InvalidRequestError,
  memoryDedupeStore,
  type WebhookHandlerOptions,
} from '../../src/index.js';
import { until } from '../helpers.js';
import { event } from './event.js';

// The claim protocol as the handler drives it, with two handlers on one store standing for two
// instances behind a load balancer.

const send = (handler: (request: Request) => Promise<Response>, body: string) =>
  handler(new Request('http://x/', { method: 'POST', body }));

/** A memory store whose clock the test moves, counting renewals. */
function clockedStore() {
  const clock = { now: 0 };
  const store = memoryDedupeStore({ now: () => clock.now });
  const counts = { renew: 0 };
  const dedupe: DedupeStore = {
    claim: (id, token, ttlMs) => store.claim(id, token, ttlMs),
    renew: (id, token, ttlMs) => {
      counts.renew++;
      return store.renew(id, token, ttlMs);
    },
    complete: (id, token) => store.complete(id, token),
    release: (id, token) => store.release(id, token),
  };
  return { clock, dedupe, counts };
}

describe('two handlers sharing one dedupe store', () => {
  it('the same delivery at both at once: onEvent runs once, the other answers 409, its retry 200', async () => {
    const { dedupe } = clockedStore();
    let calls = 0;
    let finish: () => void = () => {};
    const options: WebhookHandlerOptions = {
      dedupe,
      onEvent: () => {
        calls++;
        return new Promise<void>((resolve) => {
          finish = resolve;
        });
      },
    };
    const a = createWebhookHandler(options);
    const b = createWebhookHandler(options);
    const body = JSON.stringify(event());
    const first = send(a, body);
    await until(() => calls === 1);
    const second = await send(b, body);
    expect(second.status).toBe(409);
    expect(second.headers.get('retry-after')).toBe('60');
    finish();
    expect((await first).status).toBe(200);
    const retry = await send(b, body);
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ received: true });
    expect(calls).toBe(1);
  });

  it('a failed onEvent releases the claim: the retry at the other handler runs it at once', async () => {
    const { dedupe } = clockedStore();
    const runs: string[] = [];
    const a = createWebhookHandler({
      dedupe,
      onEvent: () => {
        runs.push('a');
        throw new Error('down');
      },
    });
    const b = createWebhookHandler({ dedupe, onEvent: () => void runs.push('b') });
    const body = JSON.stringify(event());
    expect((await send(a, body)).status).toBe(500);
    expect((await send(b, body)).status).toBe(200);
    expect((await send(a, body)).status).toBe(200);
    expect(runs).toEqual(['a', 'b']);
  });

  it('a crashed holder (claimed, never answered) blocks the id until its claim TTL, then the other runs it', async () => {
    const { clock, dedupe } = clockedStore();
    const e = event();
    // The crashed instance: it claimed and then vanished, so nothing renews, completes or releases.
    expect(dedupe.claim(e.transaction_id, 'crashed', 1_000)).toBe('claimed');
    let calls = 0;
    const b = createWebhookHandler({ dedupe, claimTtlMs: 1_000, onEvent: () => void calls++ });
    const body = JSON.stringify(e);
    expect((await send(b, body)).status).toBe(409);
    clock.now += 999;
    expect((await send(b, body)).status).toBe(409);
    clock.now += 2;
    expect((await send(b, body)).status).toBe(200);
    expect(calls).toBe(1);
  });
});

describe('claim renewal while onEvent runs', () => {
  it('a long onEvent keeps its claim past the TTL: the other handler answers 409 all along', async () => {
    const { clock, dedupe, counts } = clockedStore();
    const ttl = 30; // renewed every 10 ms of real time; the store's clock moves only when the test says
    const seen: number[] = [];
    let release: () => void = () => {};
    const a = createWebhookHandler({
      dedupe,
      claimTtlMs: ttl,
      onEvent: () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    });
    const b = createWebhookHandler({ dedupe, claimTtlMs: ttl, onEvent: () => void seen.push(1) });
    const body = JSON.stringify(event());
    const first = send(a, body);
    for (let step = 1; step <= 5; step++) {
      // Store time moves 20 ms (under the TTL) per renewal: 100 ms in all, three TTLs and more.
      const renewed = counts.renew;
      await until(() => counts.renew > renewed);
      clock.now += 20;
      expect((await send(b, body)).status).toBe(409);
    }
    release();
    expect((await first).status).toBe(200);
    expect((await send(b, body)).status).toBe(200);
    expect(seen).toEqual([]);
    // No renewal after onEvent ended: meanwhile a witness with the same TTL, on a store of its own,
    // renews three times (three of the periods the ended claim would have been renewed in).
    const after = counts.renew;
    const witness = clockedStore();
    let stopWitness: () => void = () => {};
    const witnessed = send(
      createWebhookHandler({
        dedupe: witness.dedupe,
        claimTtlMs: ttl,
        onEvent: () =>
          new Promise<void>((resolve) => {
            stopWitness = resolve;
          }),
      }),
      JSON.stringify(event()),
    );
    await until(() => witness.counts.renew >= 3);
    stopWitness();
    expect((await witnessed).status).toBe(200);
    expect(counts.renew).toBe(after);
  });

  it('a claim lost during onEvent (the process stalled past the TTL) is reported; the answer is still 200', async () => {
    const { clock, dedupe } = clockedStore();
    const errors: unknown[] = [];
    const e = event();
    let finish: (() => void) | undefined;
    const a = createWebhookHandler({
      dedupe,
      claimTtlMs: 60_000,
      onError: (error) => void errors.push(error),
      onEvent: () =>
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
    });
    const first = send(a, JSON.stringify(e));
    await until(() => finish !== undefined);
    clock.now += 60_001;
    expect(dedupe.claim(e.transaction_id, 'other-instance', 60_000)).toBe('claimed');
    finish?.();
    expect((await first).status).toBe(200);
    expect(String(errors[0])).toContain('expired before onEvent finished');
    // The other instance's run, if it fails, cannot undo the done mark.
    dedupe.release(e.transaction_id, 'other-instance');
    expect(dedupe.claim(e.transaction_id, 'third', 60_000)).toBe('done');
  });

  it('a renewal that fails is reported and retried; the answer is unchanged', async () => {
    const { dedupe } = clockedStore();
    const errors: unknown[] = [];
    let renewals = 0;
    let finish: () => void = () => {};
    const handler = createWebhookHandler({
      dedupe: {
        ...dedupe,
        renew: () => {
          renewals++;
          throw new Error('store hiccup');
        },
      },
      claimTtlMs: 30,
      onError: (error) => void errors.push(error),
      onEvent: () =>
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
    });
    const answer = send(handler, JSON.stringify(event()));
    await until(() => renewals >= 2);
    finish();
    expect((await answer).status).toBe(200);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(String(errors[0])).toContain('store hiccup');
  });
});

describe('claimTtlMs', () => {
  it.each([0, -1, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 1e11])(
    '%s is refused when the handler is made',
    (ttl) => {
      const make = () => createWebhookHandler({ onEvent: () => {}, claimTtlMs: ttl });
      expect(make).toThrow(InvalidRequestError);
      expect(make).toThrow(
        'createWebhookHandler: options.claimTtlMs must be a number of ms >= 1 and <= 31536000000 (a year)',
      );
    },
  );

  it('sets the Retry-After of a 409, in whole seconds', async () => {
    const { dedupe } = clockedStore();
    const e = event();
    dedupe.claim(e.transaction_id, 'elsewhere', 60_000);
    const handler = createWebhookHandler({ dedupe, claimTtlMs: 1_500, onEvent: () => {} });
    expect((await send(handler, JSON.stringify(e))).headers.get('retry-after')).toBe('2');
  });
});
