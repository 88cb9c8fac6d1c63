// stripe-node with its node:http client (keep-alive Agent).
import { stripeClient } from '../stripe-client.mjs';

export const label = 'stripe-node rawRequest (node:http)';
export const pkg = 'stripe';

/** @param {import('../shared.mjs').Target} t */
export async function create(t) {
  return stripeClient(t, 'node');
}
