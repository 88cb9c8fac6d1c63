import { describe, expect, it } from 'vitest';
import { useMockServer } from '../helpers.js';
import {
  A,
  AI,
  ask,
  credits,
  EMPTY,
  ENTERPRISE,
  ENTERPRISE_PAGE,
  EXPORT,
  expectPaywall,
  expectProblem,
  FRAMEWORKS,
  PAST_DUE,
  PRO,
  PRO_PAGE,
  servers,
} from './helpers.js';

// The answer to a "no" through each adapter: a browser navigation is sent to the signed paywall
// page, an API client gets problem+json (with upgrade_url when a link resolves).
const mock = useMockServer();
const EMAIL = 'customer@example.com';

describe.each(FRAMEWORKS)('a "no" through $name', (framework) => {
  const start = servers(framework, mock);

  it('inactive: 402 with upgrade_url to an API client, 303 to the tier page for a browser', async () => {
    const s = await start({ need: PRO });
    const api = expectProblem(await ask(s, { account: PAST_DUE, email: EMAIL }), 402, 'inactive');
    await expectPaywall(mock.server, api.upgrade_url, PAST_DUE, PRO_PAGE);
    for (const method of ['GET', 'HEAD'] as const) {
      const browser = await ask(s, { account: PAST_DUE, email: EMAIL, browser: true, method });
      expect(browser.status).toBe(303);
      await expectPaywall(mock.server, browser.headers.get('location'), PAST_DUE, PRO_PAGE);
    }
    // A browser POST is not a navigation: the problem, not a redirect.
    const posted = await ask(s, {
      account: PAST_DUE,
      email: EMAIL,
      method: 'POST',
      headers: { accept: 'text/html' },
    });
    expectProblem(posted, 402, 'inactive');
    expect(s.handled).toBe(0);
  });

  it('not_entitled without paywall.target: 402 without upgrade_url, and no redirect for a browser', async () => {
    const s = await start({ need: EXPORT });
    const api = expectProblem(await ask(s, { account: EMPTY, email: EMAIL }), 402, 'not_entitled');
    expect(api).not.toHaveProperty('upgrade_url');
    expectProblem(await ask(s, { account: EMPTY, email: EMAIL, browser: true }), 402, 'not_entitled');
    expect(mock.server.requests.count({ path: '/api/resolve/' })).toBe(0);
    expect(s.handled).toBe(0);
  });

  it("not_entitled with paywall.target: the target's page, as upgrade_url and as the browser's redirect", async () => {
    const targets: object[] = [];
    const target = (need: object) => {
      targets.push(need);
      return ENTERPRISE;
    };
    const s = await start({ need: EXPORT }, { paywall: { target } });
    const api = expectProblem(await ask(s, { account: EMPTY, email: EMAIL }), 402, 'not_entitled');
    await expectPaywall(mock.server, api.upgrade_url, EMPTY, ENTERPRISE_PAGE);
    const browser = await ask(s, { account: EMPTY, email: EMAIL, browser: true });
    expect(browser.status).toBe(303);
    await expectPaywall(mock.server, browser.headers.get('location'), EMPTY, ENTERPRISE_PAGE);
    expect(targets[0]).toEqual(EXPORT);
    // The link of one account and target is resolved once and reused.
    expect(mock.server.requests.count({ path: '/api/resolve/' })).toBe(1);
  });

  it('without any paywall option a "no" is a 402 problem, for a browser too', async () => {
    const s = await start({ need: PRO }, { paywall: false });
    const api = expectProblem(await ask(s, { account: PAST_DUE, email: EMAIL }), 402, 'inactive');
    expect(api).not.toHaveProperty('upgrade_url');
    expectProblem(await ask(s, { account: PAST_DUE, email: EMAIL, browser: true }), 402, 'inactive');
  });

  it('insufficient_credits: 402 with remaining_balance, nothing debited, the handler never runs', async () => {
    mock.server.store.setBalance(A, AI, 'credits', 5);
    const s = await start({ need: credits(10) });
    const api = expectProblem(await ask(s, { account: A }), 402, 'insufficient_credits');
    expect(api.remaining_balance).toBe(5);
    expect(api).not.toHaveProperty('upgrade_url');
    expect(mock.server.store.balance(A, AI, 'credits')).toBe(5);
    expect(mock.server.store.ledger.size).toBe(0);
    expect(s.handled).toBe(0);
  });

  it('insufficient_credits with paywall.target: upgrade_url, and a browser is sent to the page', async () => {
    mock.server.store.setBalance(A, AI, 'credits', 5);
    const s = await start({ need: credits(10) }, { paywall: { target: () => ENTERPRISE } });
    const api = expectProblem(await ask(s, { account: A, email: EMAIL }), 402, 'insufficient_credits');
    expect(api.remaining_balance).toBe(5);
    await expectPaywall(mock.server, api.upgrade_url, A, ENTERPRISE_PAGE);
    const browser = await ask(s, { account: A, email: EMAIL, browser: true });
    expect(browser.status).toBe(303);
    await expectPaywall(mock.server, browser.headers.get('location'), A, ENTERPRISE_PAGE);
    expect(mock.server.store.balance(A, AI, 'credits')).toBe(5);
  });
});
