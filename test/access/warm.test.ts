import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAccessCache } from '../../src/index.js';
import * as browser from '../../src/platform/browser.js';
import { warmRequestPath } from '../../src/platform/server.js';
import { clientFor, useMockServer } from '../helpers.js';
import { answeringStore } from './helpers.js';

// Issue 28 (4): with a shared store, an instance may go long without asking the service, and its
// first request (after an invalidation, every instance waiting for it) used to load ky and undici on
// the spot. The cache now loads them ahead of it, in the background, sending nothing.

vi.mock('../../src/platform/server.js', async (actual) => {
  const platform = await actual<typeof import('../../src/platform/server.js')>();
  return { ...platform, warmRequestPath: vi.fn(platform.warmRequestPath) };
});

const mock = useMockServer();
afterEach(() => vi.mocked(warmRequestPath).mockClear());

describe('the access cache loads the request path ahead of its first request', () => {
  it('with a shared store: once, on the first lookup the store answers, sending nothing', async () => {
    const access = createAccessCache(clientFor(mock.server), { store: answeringStore() });
    expect(warmRequestPath).not.toHaveBeenCalled();
    for (const account of ['acct_x', 'acct_y', 'acct_x']) {
      expect(await access.isActive({ account_ref_id: account })).toBe(true);
    }
    expect(warmRequestPath).toHaveBeenCalledTimes(1);
    await vi.mocked(warmRequestPath).mock.results[0]?.value;
    expect(mock.server.requests.count()).toBe(0);
    await access.close();
  });

  it('without a store: never (each lookup that needs the service asks it at once)', async () => {
    const access = createAccessCache(clientFor(mock.server));
    expect(await access.isActive({ account_ref_id: 'acct_active' })).toBe(true);
    expect(warmRequestPath).not.toHaveBeenCalled();
    await access.close();
  });

  it('warmRequestPath resolves (twice), sends nothing, and requests work after it; a no-op in the browser build', async () => {
    await warmRequestPath();
    await warmRequestPath();
    await expect(browser.warmRequestPath()).resolves.toBeUndefined();
    expect(mock.server.requests.count()).toBe(0);
    expect(await clientFor(mock.server).accounts.isActive({ account_ref_id: 'acct_active' })).toBe(true);
  });
});
