import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// These tests load the built package (npm test builds before it tests).
const root = fileURLToPath(new URL('../..', import.meta.url));
const dist = (file: string) => `${root}dist/${file}`;

/** Runs a script in a fresh Node process from the project root and returns what it printed. */
function node(args: string[], script: string): string {
  return execFileSync(process.execPath, [...args, '-e', script], { cwd: root, encoding: 'utf8' }).trim();
}

/** Starts the mock, lists invoices with the built client, prints the count. */
const roundTrip = (load: string) => `
  ${load}
  (async () => {
    const server = await testing.startMockServer();
    try {
      const billing = new sdk.BillingClient({ apiKey: server.apiKey, baseUrl: server.baseUrl });
      const page = await billing.invoices.list({ account_ref_id: 'acct_active' });
      console.log(page.count);
    } finally { await server.close(); }
  })().catch((e) => { console.error(e); process.exit(1); });`;

describe('the built package', () => {
  it('has both entries in ESM and CJS, each with its types', () => {
    for (const file of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) {
      expect(existsSync(dist(file)), file).toBe(true);
      expect(existsSync(dist(`testing/${file}`)), `testing/${file}`).toBe(true);
    }
  });

  it('works from require()', () => {
    const out = node(
      [],
      roundTrip(`const sdk = require('billing-sdk'); const testing = require('billing-sdk/testing');`),
    );
    expect(out).toBe('45');
  });

  it('works from require() where Node cannot require ES modules (--no-experimental-require-module)', () => {
    const out = node(
      ['--no-experimental-require-module'],
      roundTrip(`const sdk = require('billing-sdk'); const testing = require('billing-sdk/testing');`),
    );
    expect(out).toBe('45');
  });

  it('works from import', () => {
    const out = node(
      ['--input-type=module'],
      roundTrip(
        `const sdk = await import('billing-sdk'); const testing = await import('billing-sdk/testing');`,
      ).replace(/\(async \(\) => \{/, 'await (async () => {'),
    );
    expect(out).toBe('45');
  });

  it('billing-sdk/view loads from import and require, and carries no zod, ky or jose', () => {
    for (const file of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) {
      expect(existsSync(dist(`view/${file}`)), `view/${file}`).toBe(true);
      expect(readFileSync(dist(`view/${file}`), 'utf8'), `view/${file}`).not.toMatch(
        /\b(zod|ky|jose)\b['"/]/,
      );
    }
    const script = `console.log(typeof view.createAccountView, typeof view.AccountViewError)`;
    expect(node([], `const view = require('billing-sdk/view'); ${script}`)).toBe('function function');
    expect(node(['--input-type=module'], `const view = await import('billing-sdk/view'); ${script}`)).toBe(
      'function function',
    );
  });

  it('keeps ky and zod types out of the public declarations', () => {
    for (const file of ['index.d.ts', 'index.d.cts', 'testing/index.d.ts', 'testing/index.d.cts']) {
      const dts = readFileSync(dist(file), 'utf8');
      expect(dts, file).not.toMatch(/from ['"](ky|zod|zod\/mini|hono|@hono\/node-server)['"]/);
      expect(dts, file).not.toMatch(/import\(['"](ky|zod|hono)/);
    }
  });

  it('the main entry imports no Node built-in, in any of its files', () => {
    const files = readdirSync(dist(''), { recursive: true, encoding: 'utf8' }).filter(
      (f) => /\.(c?js)$/.test(f) && !f.startsWith('testing'),
    );
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) {
      expect(readFileSync(dist(file), 'utf8'), file).not.toMatch(
        /(require\(|from |import\()\s*['"](node:|fs|http|path|crypto|stream|buffer|util)['"/]/,
      );
    }
  });

  it('instanceof and isBillingError hold across the ESM and CJS copies in one process', () => {
    const out = node(
      ['--input-type=module'],
      `
      import { createRequire } from 'node:module';
      const esm = await import('billing-sdk');
      const cjs = createRequire(process.cwd() + '/')('billing-sdk');
      const fromCjs = new cjs.RateLimitError(429, {}, undefined, { operation: 'o', method: 'GET', path: '/' });
      const fromEsm = new esm.InvalidRequestError('o', []);
      console.log([
        esm.BillingError !== cjs.BillingError,
        fromCjs instanceof esm.RateLimitError,
        fromCjs instanceof esm.APIError,
        fromCjs instanceof esm.BillingError,
        fromCjs instanceof esm.NotFoundError,
        fromEsm instanceof cjs.InvalidRequestError,
        esm.isBillingError(fromCjs, 'RateLimitError'),
        cjs.isBillingError(fromEsm),
      ].join(','));`,
    );
    expect(out).toBe('true,true,true,true,false,true,true,true');
  });

  it("the helpers of one copy take a client of the other: the ESM client in the CJS build's holds, tracker and access cache", () => {
    const out = node(
      ['--input-type=module'],
      `
      import { createRequire } from 'node:module';
      const esm = await import('billing-sdk');
      const cjs = createRequire(process.cwd() + '/')('billing-sdk');
      const billing = new esm.BillingClient({ apiKey: 'k', baseUrl: 'https://billing.example.com/api/' });
      const made = [cjs.createCreditHolds(billing), cjs.createUsageTracker(billing), cjs.createAccessCache(billing)];
      console.log(made.length);
      await Promise.all([made[1].close(), made[2].close()]);`,
    );
    expect(out).toBe('3');
  });

  it('exports no zod schema object and no Schema type', () => {
    const out = node(
      ['--input-type=module'],
      `const sdk = await import('billing-sdk'); console.log(Object.keys(sdk).join(','));`,
    );
    const names = out.split(',');
    expect(names).toContain('BillingClient');
    expect(names.filter((n) => n.endsWith('Schema'))).toEqual([]);
    for (const file of ['index.d.ts', 'index.d.cts']) {
      expect(readFileSync(dist(file), 'utf8'), file).not.toMatch(
        /export \{[^}]*\b(Schema|SafeParseResult)\b/,
      );
    }
  });

  it('every optional property of the public types accepts undefined (exactOptionalPropertyTypes)', () => {
    // `apiKey: process.env.BILLING_API_KEY` must compile for users with exactOptionalPropertyTypes on.
    const offenders: string[] = [];
    for (const file of ['index.d.ts', 'testing/index.d.ts']) {
      for (const line of readFileSync(dist(file), 'utf8').split('\n')) {
        const property = line.match(/^\s+(?:readonly\s+)?[\w$]+\?:\s(.*);$/);
        if (property && !/\b(undefined|unknown|any)\b/.test(property[1] ?? ''))
          offenders.push(`${file}: ${line.trim()}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
