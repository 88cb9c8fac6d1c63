import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DEMO } from '../../src/testing/index.js';
import { until, useMockServer } from '../helpers.js';
import { A, AI, PAST_DUE, setupFor } from './helpers.js';
import { openStream, STATE_FRAMEWORKS, sse, VIEW } from './state-helpers.js';

// gate.state's streams at their edges: the default limits, clients that go away early, clients that
// read nothing, each framework's form.
const mock = useMockServer();

describe('gate.state stream limits', () => {
  it('the default per-account limit is 20: the 21st is 429, and one closed makes room', async () => {
    const s = await STATE_FRAMEWORKS[0]!.serve(setupFor(mock.server), VIEW);
    try {
      const open = [];
      for (let i = 0; i < 20; i++) {
        const res = await openStream(s.url, A);
        expect(res.status).toBe(200);
        open.push(res);
      }
      expect(s.state.stats()).toEqual({ streams: 20, accounts: 1 });
      const over = await openStream(s.url, A);
      expect(over.status).toBe(429);
      expect(await over.json()).toMatchObject({ reason: 'too_many_streams' });
      await open.shift()?.body?.cancel();
      await until(() => s.state.stats().streams === 19);
      const again = await openStream(s.url, A);
      expect(again.status).toBe(200);
      const events = sse(again);
      expect((await events.next()).account_ref_id).toBe(A);
      await events.cancel();
      for (const res of open) await res.body?.cancel();
      await until(() => s.state.stats().streams === 0);
    } finally {
      await s.close();
    }
  });
});

describe('gate.state: a change while a stream is being opened', () => {
  it('an invalidation heard while the first state is read is not missed: the stream reads again', async () => {
    const setup = setupFor(mock.server);
    const s = await STATE_FRAMEWORKS[0]!.serve(setup, { ...VIEW, streams: { balanceTtlMs: 0 } });
    try {
      // The access cache holds the account (export: yes); the balance, read each time, is slow.
      expect((await fetch(`${s.url}/state`, { headers: { 'x-account': A } })).status).toBe(200);
      mock.server.faults.add({ path: '/api/usage/credits/balance/', delayMs: 400, times: 1 });
      const opening = openStream(s.url, A);
      await new Promise((resolve) => setTimeout(resolve, 150));
      // Meanwhile the customer loses export, and the webhook's invalidation arrives.
      mock.server.store.setEntitlement(A, AI, 'export', false);
      await setup.access.invalidate(A);
      const events = sse(await opening);
      // The first state was read before the change; the stream must not stop there.
      const first = await events.next();
      const latest = first.features.export === false ? first : await events.next();
      expect(latest.features.export).toBe(false);
      await events.cancel();
    } finally {
      mock.server.faults.clear();
      await s.close();
    }
  });
});

describe('gate.state: only the session names the account', () => {
  it('a stream asked with another account in its query, path, Last-Event-ID and headers streams its own', async () => {
    const s = await STATE_FRAMEWORKS[1]!.serve(setupFor(mock.server), VIEW);
    try {
      const res = await fetch(`${s.url}/state?account_ref_id=${PAST_DUE}&account=${PAST_DUE}`, {
        headers: {
          accept: 'text/event-stream',
          'x-account': A,
          'last-event-id': PAST_DUE,
          'x-account-ref-id': PAST_DUE,
        },
      });
      const events = sse(res);
      const state = await events.next();
      expect(state.account_ref_id).toBe(A);
      expect(JSON.stringify(state)).not.toContain(PAST_DUE);
      expect(s.state.stats()).toEqual({ streams: 1, accounts: 1 });
      await events.cancel();
    } finally {
      await s.close();
    }
  });
});

describe('gate.state stream slots on the error paths', () => {
  it('refused and failed streams take no slot: an account is never locked out by them', async () => {
    const errors: unknown[] = [];
    const setup = setupFor(mock.server, { onError: (e) => errors.push(e) });
    const s = await STATE_FRAMEWORKS[0]!.serve(setup, { ...VIEW, streams: { perAccount: 1 } });
    try {
      // Billing down: 25 tries of one account, each 503.
      mock.server.faults.add({ path: '/api/', status: 503, times: Number.POSITIVE_INFINITY });
      for (let i = 0; i < 25; i++) expect((await openStream(s.url, A)).status).toBe(503);
      mock.server.faults.clear();
      // Back: the one slot is free; a stream whose re-read fails ends and gives it back.
      const events = sse(await openStream(s.url, A));
      await events.next();
      mock.server.faults.add({ path: '/api/', status: 503, times: Number.POSITIVE_INFINITY });
      await setup.access.invalidate(A);
      expect(await events.ended()).toBe(true);
      mock.server.faults.clear();
      await until(() => s.state.stats().streams === 0);
      const again = await openStream(s.url, A);
      expect(again.status).toBe(200);
      await again.body?.cancel();
      expect(errors.length).toBe(26);
    } finally {
      mock.server.faults.clear();
      await s.close();
    }
  });

  it('close() while the first read of a stream is under way: 503, nothing opened after', async () => {
    const s = await STATE_FRAMEWORKS[0]!.serve(setupFor(mock.server), VIEW);
    try {
      mock.server.faults.add({ path: '/api/', delayMs: 300, times: 3 });
      const opened = openStream(s.url, A);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await s.state.close();
      const res = await opened;
      expect(res.status).toBe(503);
      expect(s.state.stats()).toEqual({ streams: 0, accounts: 0 });
    } finally {
      mock.server.faults.clear();
      await s.close();
    }
  });
});

describe.each(STATE_FRAMEWORKS)('gate.state streams through $name', (framework) => {
  it('a client that goes away ends its stream', async () => {
    const s = await framework.serve(setupFor(mock.server), VIEW);
    try {
      const controller = new AbortController();
      const events = sse(await openStream(s.url, A, controller.signal));
      await events.next();
      expect(s.state.stats().streams).toBe(1);
      controller.abort();
      await until(() => s.state.stats().streams === 0);
    } finally {
      await s.close();
    }
  });

  it('a client that goes away while its first state is read leaves nothing open', async () => {
    const s = await framework.serve(setupFor(mock.server), VIEW);
    try {
      mock.server.faults.add({ path: '/api/', delayMs: 300, times: 1 });
      const controller = new AbortController();
      const opened = openStream(s.url, A, controller.signal).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
      controller.abort();
      await opened;
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(s.state.stats()).toEqual({ streams: 0, accounts: 0 });
    } finally {
      mock.server.faults.clear();
      await s.close();
    }
  });
});

describe('gate.state streams and slow clients', () => {
  it('a client that reads nothing is kept the latest state only: no queue of heartbeats and states', async () => {
    const setup = setupFor(mock.server);
    const s = await STATE_FRAMEWORKS[0]!.serve(setup, { ...VIEW, streams: { heartbeatMs: 2 } });
    const controller = new AbortController();
    try {
      const res = await s.state.fetch(
        new Request('http://app.test/state', {
          headers: { accept: 'text/event-stream', 'x-account': A },
          signal: controller.signal,
        }) as never,
      );
      // Nothing read for a while: a heartbeat every 2 ms, and 20 states one after the other.
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (let i = 1; i <= 20; i++) {
        mock.server.store.setBalance(A, AI, 'credits', 100 + i);
        await setup.access.invalidate(A);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      const events = sse(res);
      const seen = [await events.next()];
      while (seen.at(-1)?.credits[AI]?.credits !== 120) seen.push(await events.next());
      // The first state, then the latest (a read still under way when the client reads may add one):
      // what came between was replaced, not queued (20 states), and no heartbeats piled up.
      expect(seen[0]?.credits[AI]?.credits).toBe(DEMO.initialCredits);
      expect(seen.length).toBeLessThanOrEqual(3);
      expect(events.comments()).toBeLessThanOrEqual(2);
    } finally {
      controller.abort();
      await s.close();
    }
  });
});

/**
 * A Node response whose connection takes nothing until `release()` (a client that stopped reading,
 * its socket buffers full): a real `Writable`, so `write` answers `false` and `drain` comes as Node's
 * do. What the stream wrote is in `written`.
 */
function stalledResponse() {
  const held: (() => void)[] = [];
  let flowing = false;
  const chunks: Buffer[] = [];
  const res = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      if (flowing) done();
      else held.push(done);
    },
  });
  return Object.assign(res, {
    status: 0,
    writeHead(status: number) {
      this.status = status;
      return this;
    },
    written: () => Buffer.concat(chunks).toString(),
    release() {
      flowing = true;
      for (const done of held.splice(0)) done();
    },
  });
}

describe('gate.state streams to a Node response that does not drain', () => {
  it.each([STATE_FRAMEWORKS[1]!, STATE_FRAMEWORKS[2]!])(
    '$name: nothing piles up in its write buffer; the latest state comes when it drains',
    async (framework) => {
      const setup = setupFor(mock.server);
      const s = await framework.serve(setup, { ...VIEW, streams: { heartbeatMs: 2 } });
      const res = stalledResponse();
      try {
        const request = { headers: { accept: 'text/event-stream', 'x-account': A } } as never;
        const done =
          framework.name === 'express'
            ? s.state.express(request, res, (error) => {
                throw error;
              })
            : s.state.fastify(request, {
                raw: res,
                code: () => {},
                header: () => {},
                send: () => {},
                hijack: () => {},
              });
        await until(() => res.writableLength > 0);
        await new Promise((resolve) => setTimeout(resolve, 200));
        for (let i = 1; i <= 10; i++) {
          mock.server.store.setBalance(A, AI, 'credits', 200 + i);
          await setup.access.invalidate(A);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        // The hello and the first state, then at most one more state: not 100 heartbeats and 10 states.
        expect(res.writableLength).toBeLessThan(1024 + 600);
        res.release();
        await until(() => res.written().includes('"credits":210'));
        expect(res.written().split('event: state').length - 1).toBeLessThanOrEqual(3);
        res.emit('close');
        await done;
        await until(() => s.state.stats().streams === 0);
      } finally {
        await s.close();
      }
    },
  );
});
