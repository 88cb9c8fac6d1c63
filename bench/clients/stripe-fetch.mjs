// stripe-node with its fetch client (global fetch), via the public `rawRequest`, pointed at the server
// through host/port/protocol.
import Stripe from 'stripe';

export const label = 'stripe-node rawRequest (fetch)';
export const pkg = 'stripe';

/** @param {import('../shared.mjs').Target} t */
export async function create(t) {
  const stripe = new Stripe(t.apiKey, {
    httpClient: Stripe.createFetchHttpClient(),
    host: '127.0.0.1',
    port: t.port,
    protocol: 'http',
    // Retries off; telemetry off (see stripe-node-http.mjs).
    maxNetworkRetries: 0,
    telemetry: false,
  });
  const path = t.path + t.search;
  return async () => {
    const body = await stripe.rawRequest('GET', path);
    return body.results;
  };
}
