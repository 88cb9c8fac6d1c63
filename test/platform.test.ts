import { describe, expect, it } from 'vitest';
import * as browser from '../src/platform/browser.js';
import * as server from '../src/platform/server.js';

// The browser/worker build compiles platform/browser.ts in the place of platform/server.ts
// (tsup.config.ts): both must offer the same names with the same types, or one build breaks.
const sameTypes: typeof server = browser;
const sameTypesBack: typeof browser = server;

describe('platform: the one module the browser build swaps', () => {
  it('exports the same names on both sides', () => {
    expect(Object.keys(browser).sort()).toEqual(Object.keys(server).sort());
    expect([sameTypes, sameTypesBack].length).toBe(2);
  });

  it('the browser side adds no user-agent, has no engine of its own and loads statically', async () => {
    expect(browser.userAgent()).toEqual({});
    expect(browser.defaultEngine(undefined)).toBeUndefined();
    expect(await browser.loadPRetry()).toBe(await server.loadPRetry());
    expect(Object.keys(await browser.loadJoseVerify()).sort()).toEqual(
      Object.keys(await server.loadJoseVerify()).sort(),
    );
  });

  it('the server side names the runtime and picks undici in Node', () => {
    expect(server.userAgent()['user-agent']).toMatch(/^billing-sdk\/\S+ node\/\d+/);
    expect(typeof server.defaultEngine(undefined)).toBe('function');
  });
});
