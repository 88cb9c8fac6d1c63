import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMockCore } from './core.js';
import { nodeListener } from './node-adapter.js';
import type { MockServer, MockServerOptions } from './types.js';

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Starts the mock on 127.0.0.1 (an ephemeral port by default) for tests over real HTTP, e.g.
 * `new BillingClient({ baseUrl: server.baseUrl, apiKey: server.apiKey })`.
 */
export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  const core = createMockCore(options);
  let origin = 'http://127.0.0.1';
  const server = createServer(nodeListener(core.dispatch, () => origin));
  await listen(server, options.port ?? 0);
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    baseUrl: `${origin}/api/`,
    appUrl: core.config.appUrl ?? origin,
    apiKey: core.config.apiKey,
    signingKey: core.config.signingKey,
    store: core.store,
    faults: core.faults,
    requests: core.requests,
    webhooks: core.webhooks.api,
    lifecycle: core.lifecycle,
    reset: core.reset,
    close() {
      core.webhooks.cancel();
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets would otherwise hold close() open until they time out.
        server.closeAllConnections?.();
      });
    },
  };
}
