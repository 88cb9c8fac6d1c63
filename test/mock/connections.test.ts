import { Agent } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { pause, rawRequest, waitFor } from './raw-http.js';

/**
 * Each test starts its own server: fetch keeps idle sockets in a process-wide pool, so a server
 * shared across tests would count the sockets earlier tests left behind.
 */
describe('MockServer.openConnections() and activeRequests()', () => {
  let server: MockServer;
  afterEach(() => server?.close());
  const auth = () => ({ authorization: `Bearer ${server.apiKey}` });

  it('counts a keep-alive fetch socket while it is pooled, and 0 after close()', async () => {
    server = await startMockServer();
    expect(server.openConnections()).toBe(0);
    const first = await fetch(`${server.baseUrl}products/`, { headers: auth() });
    await first.arrayBuffer();
    expect(server.openConnections()).toBe(1);
    await waitFor(() => server.activeRequests() === 0, 'the answer finished');
    await server.close();
    expect(server.openConnections()).toBe(0);
  });

  it('counts each socket of a keep-alive agent, and 0 once the agent destroys them', async () => {
    server = await startMockServer();
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    // A delay holds four requests at once, so the agent needs four sockets.
    server.faults.add({ delayMs: 150, times: 4 });
    const pending = Array.from({ length: 4 }, () =>
      rawRequest(`${server.baseUrl}products/`, { headers: auth(), agent }),
    );
    await waitFor(() => server.activeRequests() === 4, 'four requests under way');
    expect(server.openConnections()).toBe(4);
    const outcomes = await Promise.all(pending);
    expect(outcomes.map((o) => o.kind)).toEqual(['answer', 'answer', 'answer', 'answer']);
    await waitFor(() => server.activeRequests() === 0, 'the answers finished');
    // Idle in the agent's pool: still open.
    expect(server.openConnections()).toBe(4);
    agent.destroy();
    await waitFor(() => server.openConnections() === 0, 'sockets closed after agent.destroy()');
  });

  it('drops to 0 when a node:http client times out on a stalled body and destroys the socket', async () => {
    server = await startMockServer();
    server.faults.add({ stall: 'body' });
    let duringStall: number[] = [];
    const outcome = await rawRequest(`${server.baseUrl}products/`, {
      headers: auth(),
      timeoutMs: 200,
      onHead: () => {
        duringStall = [server.openConnections(), server.activeRequests()];
      },
    });
    expect(outcome.kind).toBe('timeout');
    expect(duringStall).toEqual([1, 1]);
    await waitFor(
      () => server.openConnections() === 0 && server.activeRequests() === 0,
      'the timed-out socket closed',
    );
  });

  it('activeRequests() returns to 0 when fetch aborts a stalled body', async () => {
    server = await startMockServer();
    server.faults.add({ stall: 'body' });
    const response = await fetch(`${server.baseUrl}products/`, {
      headers: auth(),
      signal: AbortSignal.timeout(200),
    });
    expect(server.activeRequests()).toBe(1);
    await expect(response.arrayBuffer()).rejects.toMatchObject({ name: 'TimeoutError' });
    await waitFor(() => server.activeRequests() === 0, 'the stalled answer dropped');
  });

  it('activeRequests() stays at 1 while a client holds a stalled body without cancelling it', async () => {
    server = await startMockServer();
    server.faults.add({ stall: 'body' });
    const controller = new AbortController();
    const response = await fetch(`${server.baseUrl}products/`, {
      headers: auth(),
      signal: controller.signal,
    });
    await pause(200);
    // Nothing on the server side gives the answer up: a leaking client would leave it there.
    expect(server.activeRequests()).toBe(1);
    expect(server.openConnections()).toBe(1);
    await response.body?.cancel();
    await waitFor(() => server.activeRequests() === 0, 'the cancelled answer dropped');
  });

  it('counts a socket reset by the mock as closed', async () => {
    server = await startMockServer();
    server.faults.add({ reset: 'before' });
    const outcome = await rawRequest(`${server.baseUrl}products/`, { headers: auth() });
    expect(outcome.kind).toBe('reset');
    await waitFor(
      () => server.openConnections() === 0 && server.activeRequests() === 0,
      'the reset socket closed',
    );
  });
});
