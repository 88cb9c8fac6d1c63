import { describe, expect, it } from 'vitest';
import { useMockServer } from '../helpers.js';
import { ask, expectProblem, FRAMEWORKS, PAST_DUE, PRO, servers } from './helpers.js';

// A paywall link the service answers with a scheme other than http(s) is never signed, so it is
// never an upgrade_url a front end renders, nor a browser's redirect: script in the app's origin.
const mock = useMockServer();
const EMAIL = 'customer@example.com';

describe.each(FRAMEWORKS)('a paywall link that is not http(s), through $name', (framework) => {
  const start = servers(framework, mock);

  it('a javascript: link from the service: 402 without upgrade_url, and no redirect to it', async () => {
    mock.server.faults.add({
      path: '/api/resolve/public-url/',
      status: 200,
      body: JSON.stringify({ type: 'redirect', url: 'javascript:alert(document.cookie)' }),
      times: Number.POSITIVE_INFINITY,
    });
    const s = await start({ need: PRO });
    const api = expectProblem(await ask(s, { account: PAST_DUE, email: EMAIL }), 402, 'inactive');
    expect(api).not.toHaveProperty('upgrade_url');
    const browser = await ask(s, { account: PAST_DUE, email: EMAIL, browser: true });
    expect(browser.headers.get('location') ?? '').not.toMatch(/^javascript:/i);
    expect(s.handled).toBe(0);
  });
});
