// stripe-node with its node:http client (keep-alive Agent), via the public `rawRequest` (for any path;
// a GET takes its query in the path). host/port/protocol point it at the server.
import Stripe from 'stripe';

export const label = 'stripe-node rawRequest (node:http)';
export const pkg = 'stripe';

/** @param {import('../shared.mjs').Target} t */
export async function create(t) {
  const stripe = new Stripe(t.apiKey, {
    httpClient: Stripe.createNodeHttpClient(),
    host: '127.0.0.1',
    port: t.port,
    protocol: 'http',
    // Retries off. Telemetry off: it only adds a header about the previous request, and the server
    // sends no request-id for it to report anyway.
    maxNetworkRetries: 0,
    telemetry: false,
  });
  const path = t.path + t.search;
  return async () => {
    // Resolves to the parsed JSON; an `error` member in the body makes it throw.
    const body = await stripe.rawRequest('GET', path);
    return body.results;
  };
}
