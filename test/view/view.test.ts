import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type AccountStateHandler, createGate } from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { backoffMs } from '../../src/view/backoff.js';
import { AccountViewError, createAccountView } from '../../src/view/index.js';
import { A, AI, gateOptions, PAST_DUE, type Setup, serveHono, setupFor } from '../gate/helpers.js';
import { VIEW } from '../gate/state-helpers.js';
import { until, useMockServer } from '../helpers.js';

// createAccountView against gate.state on a real Hono server over loopback, the mock behind it. The
// session is the `x-account` header, which the view's `fetch` option adds (a browser sends its cookie).
const mock = useMockServer();
const closing: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const close of closing.splice(0).reverse()) await close();
});

/** A state endpoint whose handler can be swapped (a dropped stream) or made to answer JSON only (a proxy that blocks streams). */
async function endpoint(setup: Setup = setupFor(mock.server)) {
  const gate = createGate(gateOptions<Request>(setup));
  let handler: AccountStateHandler<Request> = gate.state(VIEW);
  let blockStreams = false;
  let asked = 0;
  const app = new Hono();
  app.get('/state', (c) => {
    asked++;
    if (!blockStreams) return handler.hono(c);
    const headers = new Headers(c.req.raw.headers);
    headers.set('accept', 'application/json');
    return handler.fetch(new Request(c.req.raw.url, { headers }));
  });
  const server = await serveHono(app.fetch);
  closing.push(
    () => server.close(),
    () => handler.close(),
  );
  return {
    setup,
    url: `${server.url}/state`,
    get handler() {
      return handler;
    },
    get asked() {
      return asked;
    },
    blockStreams() {
      blockStreams = true;
    },
    /** Drops every open stream, as a restarted instance does. */
    async drop() {
      const old = handler;
      handler = gate.state(VIEW);
      await old.close();
    },
  };
}

const as =
  (account: string): typeof fetch =>
  (input, init) =>
    fetch(input, {
      ...init,
      headers: { ...(init?.headers as Record<string, string>), 'x-account': account },
    });

function viewOf(url: string, account: string, live = true) {
  const view = createAccountView({ url, live, fetch: as(account) });
  closing.push(() => view.close());
  return view;
}

describe('createAccountView', () => {
  it('ready is the first state; get returns the same object until it changes; subscribe hears each change', async () => {
    const e = await endpoint();
    const view = viewOf(e.url, A);
    const first = await view.ready;
    expect(first).toMatchObject({ account_ref_id: A, active: true, tier: 'pro' });
    expect(view.get()).toBe(first);
    expect(view.can('export')).toBe(true);
    expect(view.can('sso')).toBe(false);
    expect(view.can('nothing')).toBe(false);
    expect(view.balance(AI, 'credits')).toBe(DEMO.initialCredits);
    const seen: unknown[] = [];
    const stop = view.subscribe(() => seen.push(view.get()));
    // An invalidation that changes nothing sends nothing: get still answers the same object.
    await e.setup.access.invalidate(A);
    expect(view.get()).toBe(first);
    mock.server.store.setEntitlement(A, AI, 'export', false);
    await e.setup.access.invalidate(A);
    await until(() => seen.length === 1);
    expect(view.can('export')).toBe(false);
    expect(view.get()).not.toBe(first);
    stop();
    mock.server.store.setEntitlement(A, AI, 'export', true);
    await e.setup.access.invalidate(A);
    await until(() => view.can('export'));
    expect(seen.length).toBe(1);
  });

  it('refresh reads the state now; close ends the stream on the server', async () => {
    const e = await endpoint();
    const view = viewOf(e.url, PAST_DUE);
    await view.ready;
    expect((await view.refresh()).account_ref_id).toBe(PAST_DUE);
    await until(() => e.handler.stats().streams === 1);
    view.close();
    await until(() => e.handler.stats().streams === 0);
    await expect(view.refresh()).rejects.toMatchObject({ name: 'AccountViewError', reason: 'closed' });
  });

  it('ready rejects with the status without a session (401), and the view does not retry it', async () => {
    const e = await endpoint();
    const view = createAccountView({ url: e.url });
    closing.push(() => view.close());
    const error = await view.ready.catch((err: unknown) => err);
    expect(error).toBeInstanceOf(AccountViewError);
    expect(error).toMatchObject({ status: 401, reason: 'http' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(e.asked).toBe(1);
  });

  it('a dropped stream is opened again after the backoff, and the state read again', async () => {
    const e = await endpoint();
    const view = viewOf(e.url, A);
    await view.ready;
    // Changed behind the SDK's back (nothing tells the open stream): only a new read sees it.
    mock.server.store.setBalance(A, AI, 'credits', 42);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    await e.drop();
    const turn = async () => {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    await turn();
    // Nothing reconnects until the backoff's timer fires: fake time goes on in steps while real I/O runs.
    expect(e.handler.stats().streams).toBe(0);
    let waited = 0;
    while (view.balance(AI, 'credits') !== 42 && waited < 60_000) {
      vi.advanceTimersByTime(50);
      waited += 50;
      await turn();
    }
    expect(view.balance(AI, 'credits')).toBe(42);
    expect(waited).toBeGreaterThanOrEqual(backoffMs(0, 0));
    vi.useRealTimers();
    await until(() => e.handler.stats().streams === 1);
  });

  it('a server that sends a state and drops the stream at once: the reconnects back off, no steady loop', async () => {
    let streams = 0;
    const good = { account_ref_id: A, active: true, tier: 'pro', features: {}, credits: {} };
    const server = await serveHono(() => {
      streams++;
      return new Response(`event: state\ndata: ${JSON.stringify(good)}\n\n`, {
        headers: { 'content-type': 'text/event-stream' },
      });
    });
    closing.push(() => server.close());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const view = createAccountView({ url: `${server.url}/state` });
    closing.push(() => view.close());
    const turn = async () => {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    await turn();
    await view.ready;
    // A minute of the page's time: each stream lived no time at all, so each wait is longer.
    for (let waited = 0; waited < 60_000; waited += 50) {
      vi.advanceTimersByTime(50);
      await turn();
    }
    // 0.25-0.5 s, then doubling: at most 10 in a minute (not one every half second: 120 or more).
    expect(streams).toBeGreaterThan(3);
    expect(streams).toBeLessThanOrEqual(10);
  });

  it('a stream that lasted starts the backoff over: its drop is retried within 0.5 s', async () => {
    let streams = 0;
    let cut = () => {};
    const good = { account_ref_id: A, active: true, tier: 'pro', features: {}, credits: {} };
    const server = await serveHono(() => {
      streams++;
      const event = new TextEncoder().encode(`event: state\ndata: ${JSON.stringify(good)}\n\n`);
      // The first four are dropped at once (the backoff climbs); the fifth stays until cut.
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(event);
          if (streams <= 4) controller.close();
          else cut = () => controller.close();
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    });
    closing.push(() => server.close());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const view = createAccountView({ url: `${server.url}/state` });
    closing.push(() => view.close());
    const turn = async () => {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    const run = async (ms: number, until?: () => boolean) => {
      for (let waited = 0; waited < ms && !until?.(); waited += 50) {
        vi.advanceTimersByTime(50);
        await turn();
      }
    };
    await turn();
    await run(60_000, () => streams === 5);
    expect(streams).toBe(5);
    await run(10_000);
    cut();
    await turn();
    await run(500, () => streams === 6);
    expect(streams).toBe(6);
  });

  it('where streams are blocked, the state is read again when the page regains focus', async () => {
    const page = new EventTarget();
    vi.stubGlobal('window', page);
    closing.push(() => vi.unstubAllGlobals());
    const e = await endpoint();
    e.blockStreams();
    const view = viewOf(e.url, A);
    expect((await view.ready).features.export).toBe(true);
    mock.server.store.setEntitlement(A, AI, 'export', false);
    await e.setup.access.invalidate(A);
    page.dispatchEvent(new Event('focus'));
    await until(() => !view.can('export'));
  });

  it('a stream whose events are held back (a buffering proxy): the state is read on focus', async () => {
    const page = new EventTarget();
    vi.stubGlobal('window', page);
    closing.push(() => vi.unstubAllGlobals());
    const e = await endpoint();
    // In front of the endpoint, a proxy that sends a stream's headers at once and holds its body back.
    const proxy = createServer(async (req, res) => {
      const headers = new Headers(req.headers as Record<string, string>);
      const upstream = await fetch(e.url, { headers });
      if (!upstream.headers.get('content-type')?.startsWith('text/event-stream')) {
        res.writeHead(upstream.status, { 'content-type': 'application/json' });
        res.end(await upstream.text());
        return;
      }
      void upstream.body?.cancel();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    closing.push(
      () =>
        new Promise((resolve) => {
          proxy.closeAllConnections();
          proxy.close(resolve);
        }),
    );
    const { port } = proxy.address() as AddressInfo;
    let resolved = false;
    const view = createAccountView({
      url: `http://127.0.0.1:${port}/state`,
      fetch: async (input, init) => {
        const res = await as(A)(input, init);
        resolved = true;
        return res;
      },
    });
    closing.push(() => view.close());
    // The stream's headers came; its first state never will.
    await until(() => resolved);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(view.get()).toBeUndefined();
    page.dispatchEvent(new Event('focus'));
    expect((await view.ready).account_ref_id).toBe(A);
  });

  it('a read on focus that fails is reported to onError (the session ended), the state stays', async () => {
    const page = new EventTarget();
    vi.stubGlobal('window', page);
    closing.push(() => vi.unstubAllGlobals());
    const e = await endpoint();
    e.blockStreams();
    let session = true;
    const errors: unknown[] = [];
    const view = createAccountView({
      url: e.url,
      fetch: (input, init) => (session ? as(A) : fetch)(input, init),
      onError: (error) => errors.push(error),
    });
    closing.push(() => view.close());
    const first = await view.ready;
    session = false;
    page.dispatchEvent(new Event('focus'));
    await until(() => errors.length === 1);
    expect(errors[0]).toMatchObject({ name: 'AccountViewError', reason: 'http', status: 401 });
    expect(view.get()).toBe(first);
  });

  it('a refresh under way when the view is closed rejects (closed), and the state stays', async () => {
    const e = await endpoint();
    let hold: Promise<void> | undefined;
    const view = createAccountView({
      url: e.url,
      live: false,
      fetch: async (input, init) => {
        const res = await as(A)(input, init);
        await hold;
        return res;
      },
    });
    closing.push(() => view.close());
    const first = await view.ready;
    let release = () => {};
    hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    mock.server.store.setEntitlement(A, AI, 'sso', true);
    await e.setup.access.invalidate(A);
    // The server reads the new state at once; its answer reaches the page after close().
    const refreshed = view.refresh();
    await until(() => e.asked === 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    view.close();
    release();
    await expect(refreshed).rejects.toMatchObject({ name: 'AccountViewError', reason: 'closed' });
    expect(view.get()).toBe(first);
    expect(view.can('sso')).toBe(false);
  });

  it('live: false reads once, then on refresh', async () => {
    const e = await endpoint();
    const view = viewOf(e.url, A, false);
    await view.ready;
    expect(e.handler.stats().streams).toBe(0);
    mock.server.store.setEntitlement(A, AI, 'sso', true);
    await e.setup.access.invalidate(A);
    await view.refresh();
    expect(view.can('sso')).toBe(true);
  });

  it('bad options: AccountViewError before any request (property)', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            url: fc.oneof(fc.constant(''), fc.integer(), fc.constant(null)),
            live: fc.oneof(fc.string(), fc.integer()),
          },
          { requiredKeys: ['url'] },
        ),
        (options) => {
          expect(() => createAccountView(options as never)).toThrow(AccountViewError);
        },
      ),
      { numRuns: 50 },
    );
    expect(() => createAccountView({ url: '/s', fetch: 'no' as never })).toThrow(/fetch must be a function/);
  });
});

describe('backoffMs', () => {
  it('doubles from 500 ms to 30 s, half of it jittered', () => {
    expect(backoffMs(0, 0)).toBe(250);
    expect(backoffMs(0, 1)).toBe(500);
    expect(backoffMs(1, 0.5)).toBe(750);
    expect(backoffMs(10, 1)).toBe(30_000);
    fc.assert(
      fc.property(
        fc.nat(1_000),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, random) => {
          const ms = backoffMs(attempt, random);
          const ceiling = Math.min(30_000, 500 * 2 ** Math.min(attempt, 16));
          expect(ms).toBeGreaterThanOrEqual(ceiling / 2);
          expect(ms).toBeLessThanOrEqual(ceiling);
          expect(backoffMs(attempt + 1, random)).toBeGreaterThanOrEqual(ms);
        },
      ),
    );
  });
});
