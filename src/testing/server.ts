import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trackConnections } from './connections.js';
import { createMockCore } from './core.js';
import { nodeListener } from './node-adapter.js';
import type { MockServer, MockServerOptions } from './types.js';

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * The host part of the URLs the server prints: a wildcard address (all interfaces) is reached
 * through loopback, an IPv6 literal needs brackets, a name is kept as given.
 */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  if (host.includes(':') && !host.startsWith('[')) return `[${host}]`;
  return host;
}

/**
 * Starts the mock on 127.0.0.1 (or `options.host`; an ephemeral port by default) for tests over
 * real HTTP, e.g. `new BillingClient({ baseUrl: server.baseUrl, apiKey: server.apiKey })`.
 */
export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  const core = createMockCore(options);
  const host = options.host ?? '127.0.0.1';
  let origin = `http://${urlHost(host)}`;
  const server = createServer(nodeListener(core.dispatch, () => origin));
  const counts = trackConnections(server);
  await listen(server, options.port ?? 0, host.replace(/^\[(.*)\]$/, '$1'));
  const { port } = server.address() as AddressInfo;
  origin = `http://${urlHost(host)}:${port}`;
  let closing: Promise<void> | undefined;
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
    openConnections: counts.open,
    activeRequests: counts.active,
    close() {
      // Idempotent: a test may close early and an afterEach/afterAll hook close again.
      closing ??= new Promise<void>((resolve, reject) => {
        core.webhooks.cancel();
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets (and stalled answers) would otherwise hold close() open.
        server.closeAllConnections?.();
      });
      return closing;
    },
  };
}
