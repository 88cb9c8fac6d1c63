import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { type LoopbackServer, serveNode } from '../helpers.js';
import { hasChromium, launchChromium } from './chromium.js';

const chromiumHere = hasChromium('browser test');

describe.skipIf(!chromiumHere)('in headless Chromium', () => {
  let mock: MockServer;
  let site: LoopbackServer;
  let browser: Browser;
  let bundle: string;

  beforeAll(async () => {
    // The SDK's browser bundle: the built package, bundled for the browser as an app would.
    const out = await build({
      entryPoints: [fileURLToPath(new URL('page.js', import.meta.url))],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      minify: true,
      write: false,
      absWorkingDir: fileURLToPath(new URL('../..', import.meta.url)),
    });
    bundle = out.outputFiles[0]!.text;
    mock = await startMockServer({ cors: true });
    site = await serveNode((req, res) => {
      if (req.url?.startsWith('/page.js')) {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      } else {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<!doctype html><script type="module" src="/page.js"></script>');
      }
    });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await mock?.close();
  });

  it('runs the SDK against the mock across origins', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const query = new URLSearchParams({ key: mock.apiKey, api: mock.baseUrl });
    await page.goto(`${site.url}/?${query}`);
    await page.waitForFunction(() => (window as { __results?: unknown }).__results !== undefined, undefined, {
      timeout: 20_000,
    });
    const results = await page.evaluate(
      () => (window as unknown as { __results: Record<string, unknown> }).__results,
    );
    expect(errors).toEqual([]);
    expect(results).toMatchObject({
      ok: true,
      invoices: { invoices: 45, pages: 3 },
      active: true,
      tier: 'pro',
      debit: { approved: true, remaining: 997, keyLength: 36 },
      link: 'acct_ü',
      tampered: 'invalid_signature',
    });
    expect(results.guard).toMatch(/dangerouslyAllowBrowser/);
    // The calls really crossed to the mock's origin.
    expect(mock.requests.count({ path: '/api/usage/credits/debit/' })).toBe(1);
    expect(new URL(site.url).port).not.toBe(new URL(mock.baseUrl).port);
  });
});
