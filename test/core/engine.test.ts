import { Agent, type Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { BillingClient, InvalidRequestError } from '../../src/index.js';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { caught, useMockServer } from '../helpers.js';

const mock = useMockServer();

/** A server of its own, so that the sockets it counts are the test's only. */
async function onOwnServer(test: (server: MockServer) => Promise<void>): Promise<void> {
  const server = await startMockServer();
  try {
    await test(server);
  } finally {
    await server.close();
  }
}

/** A real undici Agent that counts what goes through it and which sockets it opened. */
class CountingAgent extends Agent {
  requests = 0;
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.requests += 1;
    return super.dispatch(options, handler);
  }
}

function client(
  options: ConstructorParameters<typeof BillingClient>[0] = {},
  server: MockServer = mock.server,
): BillingClient {
  return new BillingClient({
    apiKey: server.apiKey,
    baseUrl: server.baseUrl,
    logLevel: 'off',
    ...options,
  });
}

describe('the engine under ky', () => {
  it('in Node, runs on undici’s dispatcher API when no fetch is given, and on the fetch when one is', async () => {
    await client().accounts.status({ account_ref_id: 'acct_active' });
    const direct = mock.server.requests.last()?.headers ?? {};
    // Node's fetch marks every request as a CORS-mode fetch; undici's request API sends what it is given.
    expect(direct['sec-fetch-mode']).toBeUndefined();
    expect(direct['accept-encoding']).toBe('gzip, deflate, br');

    await client({ fetch: (input, init) => fetch(input, init) }).accounts.status({
      account_ref_id: 'acct_active',
    });
    expect(mock.server.requests.last()?.headers['sec-fetch-mode']).toBe('cors');
  });

  it('sends every request through the dispatcher it is given, keeping its connections alive', async () => {
    const dispatcher = new CountingAgent({ connections: 1, keepAliveTimeout: 10_000 });
    await onOwnServer(async (server) => {
      const billing = client({ dispatcher }, server);
      await Promise.all(
        Array.from({ length: 8 }, () => billing.invoices.list({ account_ref_id: 'acct_active' })),
      );
      for (let i = 0; i < 4; i++) await billing.accounts.status({ account_ref_id: 'acct_active' });
      expect(dispatcher.requests).toBe(12);
      // `connections: 1`: the twelve requests, eight of them at once, shared one kept-alive socket.
      expect(server.openConnections()).toBe(1);
    }).finally(() => dispatcher.close());
  });

  it('shares one dispatcher between clients by default, and withOptions clients too', async () => {
    await onOwnServer(async (server) => {
      const a = client({}, server);
      for (let i = 0; i < 10; i++) {
        const billing = i % 2 ? client({ timeout: 5_000 + i }, server) : a.withOptions({ maxRetries: i });
        await billing.accounts.status({ account_ref_id: 'acct_active' });
      }
      // Ten clients one after another: a dispatcher each would leave ten idle sockets. (One request
      // may start before undici has put the previous socket back, hence up to two.)
      expect(server.openConnections()).toBeLessThanOrEqual(2);
    });
  });

  it('refuses a dispatcher that is not one, and a dispatcher beside a fetch, before sending', async () => {
    for (const options of [
      { dispatcher: {} as Dispatcher },
      { dispatcher: new Agent(), fetch: (input: Request) => fetch(input) },
    ]) {
      const err = await caught(async () => client(options));
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect((err as InvalidRequestError).issues[0]?.field).toBe('dispatcher');
    }
    expect(mock.server.requests.count()).toBe(0);
  });
});
