// stripe-node with its fetch client (global fetch).
import { stripeClient } from '../stripe-client.mjs';

export const label = 'stripe-node rawRequest (fetch)';
export const pkg = 'stripe';

/** @param {import('../shared.mjs').Target} t */
export async function create(t) {
  return stripeClient(t, 'fetch');
}
