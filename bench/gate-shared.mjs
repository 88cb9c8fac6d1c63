// What the gate mode's processes share (gate.mjs, gate-app.mjs, gate-load.mjs, gate-child.mjs): the
// route's need, the accounts of the embedded mock's demo data, and how long answers are kept.
import { BillingClient, createAccessCache } from 'billing-sdk';
import { DEMO, startMockServer } from 'billing-sdk/testing';

/** The gated route's need: an active pro-plan subscription on the pro tier (`access.isActive`). */
export const GATE_NEED = Object.freeze({ subscription: 'pro-plan', tier: 'pro' });

/** Active on pro-plan/pro: let through. */
export const ALLOWED = Object.freeze({ 'x-account': DEMO.accounts.active, accept: 'application/json' });

/** Inactive (past due) on pro-plan/pro, asking as a browser navigation does: a 303 to the paywall. */
export const DENIED_NAVIGATION = Object.freeze({
  'x-account': DEMO.accounts.pastDue,
  'x-email': DEMO.emails.pastDue,
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
});

/** The same account as an API client: 402 problem+json with `upgrade_url`. */
export const DENIED_API = Object.freeze({ ...DENIED_NAVIGATION, accept: 'application/json' });

/** Access answers (`ttlMs`, `denyTtlMs`, `staleMs`) and paywall links (`linkTtlMs`) outlive the run. */
export const GATE_TTL_MS = 3_600_000;

/** Where the mock's hosted page of pro-plan/pro is, for checking a paywall link. */
export const PAYWALL_PATH = `/t/${DEMO.tiers.proPro.tier_url_id}`;

/**
 * The embedded mock, a client of it and an access cache whose answers outlive the run: what each
 * app and per-call child measures against (every measured lookup answered from memory).
 */
export async function mockedAccess() {
  const mock = await startMockServer();
  const billing = new BillingClient({ baseUrl: mock.baseUrl, apiKey: mock.apiKey, logLevel: 'off' });
  const access = createAccessCache(billing, {
    ttlMs: GATE_TTL_MS,
    denyTtlMs: GATE_TTL_MS,
    staleMs: GATE_TTL_MS,
  });
  return { mock, billing, access };
}
