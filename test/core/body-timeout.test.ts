import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APITimeoutError, APIUserAbortError, BillingClient } from '../../src/index.js';
import {
  caught,
  collectGarbage,
  instantClock,
  type LoopbackServer,
  serveNode,
  until,
  withClock,
} from '../helpers.js';

// A server no mock fault can imitate: it sends the headers and half a body, then stalls. It counts
// its open sockets, to see whether the client lets go of a connection it gave up on.
let stalling: LoopbackServer;
let requests = 0;
const sockets = new Set<Socket>();
beforeAll(async () => {
  stalling = await serveNode((req, res) => {
    requests++;
    sockets.add(req.socket);
    req.socket.once('close', () => sockets.delete(req.socket));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"count": 1, "results": [');
  });
});
afterAll(() => stalling.close());

const client = (timeout: number, maxRetries = 0) =>
  new BillingClient(
    withClock(
      { apiKey: 'k', baseUrl: `${stalling.url}/api/`, timeout, maxRetries, logLevel: 'off' },
      instantClock(),
    ),
  );

describe('a body that stalls after the headers', () => {
  it('times out within the same per-attempt timeout', async () => {
    const started = performance.now();
    const err = await caught(() => client(300).invoices.list({ account_ref_id: 'a' }));
    expect(err).toBeInstanceOf(APITimeoutError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('releases the socket of every timed-out attempt (10 stalled calls hold 0 sockets afterwards)', async () => {
    const billing = client(100);
    const errors = await Promise.all(
      Array.from({ length: 10 }, () => caught(() => billing.invoices.list({ account_ref_id: 'a' }))),
    );
    expect(errors.every((e) => e instanceof APITimeoutError)).toBe(true);
    // Without the abort, undici keeps each socket until its own 300 s body timeout.
    await until(() => sockets.size === 0, 2_000);
  });

  it('still times out after a garbage collection mid-body (the abort does not depend on the Request ky built)', async () => {
    // ky hands fetch a Request that follows the attempt's signal through links undici holds weakly;
    // once those are collected, an abort no longer reaches the engine (nodejs/undici#4068). The
    // attempt cancels its body reader itself, so the deadline holds anyway.
    const before = requests;
    const pending = caught(() => client(400).invoices.list({ account_ref_id: 'a' }));
    await until(() => requests > before);
    await collectGarbage();
    expect(await pending).toBeInstanceOf(APITimeoutError);
    await until(() => sockets.size === 0, 2_000);
  });

  it('is retried like any timeout', async () => {
    const before = requests;
    const err = (await caught(() =>
      client(300, 1).invoices.list({ account_ref_id: 'a' }),
    )) as APITimeoutError;
    expect(err).toBeInstanceOf(APITimeoutError);
    expect(err.attempts).toBe(2);
    expect(requests - before).toBeGreaterThanOrEqual(1);
    await until(() => sockets.size === 0, 2_000);
  });

  it("is cut short by the caller's signal, and its socket released", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = await caught(() =>
      client(10_000).invoices.list({ account_ref_id: 'a' }, { signal: controller.signal }),
    );
    expect(err).toBeInstanceOf(APIUserAbortError);
    await until(() => sockets.size === 0, 2_000);
  });

  it('a timeout above 2^31-1 ms means no limit (it does not fire at once)', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = performance.now();
    const err = await caught(() =>
      client(2 ** 31 + 5).invoices.list({ account_ref_id: 'a' }, { signal: controller.signal }),
    );
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  });
});
