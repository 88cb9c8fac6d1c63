// stripe-node pointed at the bench server through host/port/protocol, via the public `rawRequest`
// (for any path; a GET takes its query in the path). The two stripe clients differ only in `httpClient`.
import Stripe from 'stripe';

/**
 * @param {import('./shared.mjs').Target} t
 * @param {'node' | 'fetch'} transport
 */
export function stripeClient(t, transport) {
  const stripe = new Stripe(t.apiKey, {
    httpClient: transport === 'node' ? Stripe.createNodeHttpClient() : Stripe.createFetchHttpClient(),
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
