import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createGate } from '../../src/index.js';
import { AccountViewError, createAccountView } from '../../src/view/index.js';
import { A, AI, gateOptions, serveHono, setupFor } from '../gate/helpers.js';
import { VIEW } from '../gate/state-helpers.js';
import { until, useMockServer } from '../helpers.js';

// createAccountView at its edges: a server (or something between) answering what is not a state,
// listeners that throw or unsubscribe while they are told, a refresh racing the stream. Real HTTP
// over loopback: gate.state on the mock, or a route of the test's own sending the malformed answer.
const mock = useMockServer();
const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const encoder = new TextEncoder();
const GOOD = { account_ref_id: A, active: true, tier: 'pro', features: { export: true }, credits: {} };

/**
 * A state endpoint that streams `blocks` (each an SSE block or raw text) and then holds the stream
 * open; `cancelled` counts the streams the client ended. JSON requests get `json`.
 */
async function rawEndpoint(blocks: string[], json = JSON.stringify(GOOD)) {
  const seen = { streams: 0, cancelled: 0 };
  const server = await serveHono((request) => {
    if (!request.headers.get('accept')?.includes('text/event-stream'))
      return new Response(json, { headers: { 'content-type': 'application/json' } });
    seen.streams++;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const block of blocks) controller.enqueue(encoder.encode(block));
      },
      cancel() {
        seen.cancelled++;
      },
    });
    request.signal.addEventListener('abort', () => void body.cancel().catch(() => {}));
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  });
  closing.push(() => server.close());
  return { url: `${server.url}/state`, seen };
}

/** gate.state on the mock, served by Hono; the session is the `x-account` header the view's fetch adds. */
async function gateEndpoint() {
  const setup = setupFor(mock.server);
  const state = createGate(gateOptions<Request>(setup)).state(VIEW);
  const server = await serveHono((request) => state.fetch(request));
  closing.push(
    () => server.close(),
    () => state.close(),
  );
  return { setup, state, url: `${server.url}/state` };
}

const as =
  (account: string, before?: (init: RequestInit | undefined) => Promise<void>): typeof fetch =>
  async (input, init) => {
    const res = await fetch(input, {
      ...init,
      headers: { ...(init?.headers as Record<string, string>), 'x-account': account },
    });
    await before?.(init);
    return res;
  };

function track<T extends { close(): void }>(view: T): T {
  closing.push(() => view.close());
  return view;
}

describe('createAccountView: what is not a state', () => {
  it('a malformed event: the last state stays, the error is reported, the stream is ended on the server', async () => {
    const e = await rawEndpoint([
      `event: state\ndata: ${JSON.stringify(GOOD)}\n\n`,
      'event: state\ndata: {oops\n\n',
    ]);
    const errors: unknown[] = [];
    const view = track(createAccountView({ url: e.url, onError: (error) => errors.push(error) }));
    const first = await view.ready;
    await until(() => errors.length === 1);
    expect(errors[0]).toBeInstanceOf(AccountViewError);
    expect(errors[0]).toMatchObject({ reason: 'invalid_answer' });
    expect(view.get()).toBe(first);
    // The connection is given up, not left open on the server (it would count against its limit).
    await until(() => e.seen.cancelled >= 1);
  });

  it('a body that never ends an event (1 MB without a blank line): given up, not buffered for ever', async () => {
    const line = 'x'.repeat(64 * 1024);
    const e = await rawEndpoint([`event: state\ndata: ${JSON.stringify(GOOD)}\n\n`, ...Array(20).fill(line)]);
    const errors: unknown[] = [];
    const view = track(createAccountView({ url: e.url, onError: (error) => errors.push(error) }));
    const first = await view.ready;
    await until(() => errors.length === 1);
    expect(errors[0]).toMatchObject({ name: 'AccountViewError', reason: 'invalid_answer' });
    expect(view.get()).toBe(first);
    await until(() => e.seen.cancelled >= 1);
  });

  it('a malformed first event: ready rejects with an AccountViewError', async () => {
    const e = await rawEndpoint(['event: state\ndata: [1,2\n\n']);
    const view = track(createAccountView({ url: e.url }));
    const error = await view.ready.catch((err: unknown) => err);
    expect(error).toBeInstanceOf(AccountViewError);
    expect(view.get()).toBeUndefined();
    await until(() => e.seen.cancelled >= 1);
  });

  it('JSON that is not a state (a proxy page, null, {}): refresh rejects with an AccountViewError, the state stays', async () => {
    for (const json of ['<html>sign in</html>', 'null', '{}', '{"features":{}}']) {
      const e = await rawEndpoint([`event: state\ndata: ${JSON.stringify(GOOD)}\n\n`], json);
      const view = track(createAccountView({ url: e.url }));
      const first = await view.ready;
      const error = await view.refresh().catch((err: unknown) => err);
      expect(error).toBeInstanceOf(AccountViewError);
      expect(view.get()).toBe(first);
      expect(view.can('export')).toBe(true);
      view.close();
    }
  });
});

describe('createAccountView: a connection cut mid-stream', () => {
  it('before the first state: ready rejects with an AccountViewError (network), onError hears the same', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('retry: 1000\n\n', () => res.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closing.push(
      () =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(resolve);
        }),
    );
    const { port } = server.address() as AddressInfo;
    const errors: unknown[] = [];
    const view = track(
      createAccountView({ url: `http://127.0.0.1:${port}/state`, onError: (error) => errors.push(error) }),
    );
    const error = await view.ready.catch((err: unknown) => err);
    expect(error).toBeInstanceOf(AccountViewError);
    expect(error).toMatchObject({ reason: 'network' });
    expect(errors[0]).toBe(error);
  });
});

describe('createAccountView: listeners', () => {
  it('a listener unsubscribed by another while they are told is not called after', async () => {
    const e = await gateEndpoint();
    const view = track(createAccountView({ url: e.url, fetch: as(A) }));
    await view.ready;
    const calls: string[] = [];
    let stopB = () => {};
    view.subscribe(() => {
      calls.push('a');
      stopB();
    });
    stopB = view.subscribe(() => calls.push('b'));
    mock.server.store.setBalance(A, AI, 'credits', 7);
    await e.setup.access.invalidate(A);
    await until(() => view.balance(AI, 'credits') === 7);
    expect(calls).toEqual(['a']);
  });

  it('a listener that throws: the others are still told, the stream stays, the throw is reported', async () => {
    const e = await gateEndpoint();
    const errors: unknown[] = [];
    const view = track(
      createAccountView({ url: e.url, fetch: as(A), onError: (error) => errors.push(error) }),
    );
    await view.ready;
    const boom = new Error('a component failed');
    let told = 0;
    view.subscribe(() => {
      throw boom;
    });
    view.subscribe(() => told++);
    mock.server.store.setBalance(A, AI, 'credits', 8);
    await e.setup.access.invalidate(A);
    await until(() => told === 1);
    expect(errors).toEqual([boom]);
    mock.server.store.setBalance(A, AI, 'credits', 9);
    await e.setup.access.invalidate(A);
    await until(() => told === 2);
    // The same stream carried both: it was not dropped and opened again.
    expect(e.state.stats().streams).toBe(1);
    expect(view.balance(AI, 'credits')).toBe(9);
  });
});

describe('createAccountView: refresh racing the stream', () => {
  it('an answer read before a newer state came on the stream does not overwrite it', async () => {
    const e = await gateEndpoint();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The JSON answer is read by the server at once, and reaches the page late (a slow network).
    const view = track(
      createAccountView({
        url: e.url,
        fetch: as(A, async (init) => {
          if ((init?.headers as Record<string, string> | undefined)?.accept === 'application/json')
            await held;
        }),
      }),
    );
    await view.ready;
    const refreshed = view.refresh();
    await new Promise((resolve) => setTimeout(resolve, 100));
    mock.server.store.setEntitlement(A, AI, 'export', false);
    await e.setup.access.invalidate(A);
    await until(() => !view.can('export'));
    const newer = view.get();
    release();
    expect(await refreshed).toBe(newer);
    expect(view.can('export')).toBe(false);
    expect(view.get()).toBe(newer);
  });
});
