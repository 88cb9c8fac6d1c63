import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreditHolds, type HoldStore } from '../../src/index.js';
import { DEMO, type MockServer } from '../../src/testing/index.js';
import { clientFor, startMock } from '../helpers.js';

const PRODUCT = DEMO.products.aiAssistant.product_code;
const METER = DEMO.meters.credits;
const BALANCE = '/api/usage/credits/balance/';

/**
 * Two services (a live and a sandbox one: two mock servers, two base URLs and keys) whose clients
 * share one hold store made with its default options: neither ever counts the other's balance or
 * holds. `dump` gives what the store wrote (`''` for none to read), to check that no API key is in it.
 */
export function holdNamespaceCase(
  name: string,
  storeOf: () => Promise<HoldStore>,
  dump: () => Promise<string>,
): void {
  describe(`${name}: hold ledgers never mix services`, () => {
    let live: MockServer;
    let sandbox: MockServer;
    beforeAll(async () => {
      [live, sandbox] = await Promise.all([
        startMock({ apiKey: 'sk_live_namespace_test_key' }),
        startMock({ apiKey: 'sk_test_namespace_test_key' }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([live?.close(), sandbox?.close()]);
    });

    it('live and sandbox clients sharing the store keep their own balances and holds', async () => {
      const store = await storeOf();
      const account_ref_id = `acct_ns_${process.pid}_${Date.now()}`;
      for (const [server, balance] of [
        [live, 1_000],
        [sandbox, 0],
      ] as const) {
        await server.lifecycle.subscribe({ account_ref_id });
        server.store.setBalance(account_ref_id, PRODUCT, METER, balance);
      }
      const liveClient = clientFor(live);
      const sandboxClient = clientFor(sandbox);
      const liveHolds = createCreditHolds(liveClient, { store });
      const sandboxHolds = createCreditHolds(sandboxClient, { store });
      const params = { account_ref_id, product_code: PRODUCT, meter_code: METER, quantity: 500 };
      expect(await liveHolds.reserve(params)).toMatchObject({ approved: true, available: 500 });
      // The sandbox reads its own balance (0) and refuses: the live balance never lets it through.
      sandbox.requests.clear();
      expect(await sandboxHolds.reserve(params)).toEqual({
        approved: false,
        error_code: 'insufficient_credits',
        available: 0,
      });
      expect(sandbox.requests.count({ method: 'GET', path: BALANCE })).toBe(1);
      // The live ledger counts only its own hold; a sandbox invalidation leaves it fresh.
      await sandboxHolds.invalidate(account_ref_id);
      live.requests.clear();
      expect(await liveHolds.reserve(params)).toMatchObject({ approved: true, available: 0 });
      expect(live.requests.count({ method: 'GET', path: BALANCE })).toBe(0);
      // What a shared store wrote names the account, never a key (memory has nothing to read: '').
      const written = await dump();
      if (written) expect(written).toContain(account_ref_id);
      expect(written).not.toContain('namespace_test_key');
    });
  });
}
