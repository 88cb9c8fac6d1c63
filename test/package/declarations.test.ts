import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The published declarations are the public API and nothing else (npm test builds before it
// tests): the request path behind `APIResource`, its endpoints, rules and resolved options are
// internal (`@internal`, stripped by tsup.config.ts), so users cannot come to depend on them.
const root = fileURLToPath(new URL('../..', import.meta.url));
const FILES = [
  'index.d.ts',
  'index.d.cts',
  'redis/index.d.ts',
  'redis/index.d.cts',
  'postgres/index.d.ts',
  'postgres/index.d.cts',
  'node/index.d.ts',
  'node/index.d.cts',
  'ai/index.d.ts',
  'ai/index.d.cts',
  'view/index.d.ts',
  'view/index.d.cts',
  'testing/index.d.ts',
  'testing/index.d.cts',
];
const INTERNAL = [
  'ApiCore',
  'Endpoint',
  'ParamRules',
  'Rules',
  'CrossRule',
  'ResolvedOptions',
  'CallOptions',
  'BuiltRequest',
  'SdkLogger',
  'Schema',
  'Transport',
  'WireRequest',
  'WireResponse',
  'Engine',
  'Generations',
  '_call',
  '_list',
];

describe('the published declarations', () => {
  it.each(FILES)('%s names nothing internal', (file) => {
    const text = readFileSync(`${root}dist/${file}`, 'utf8');
    const found = INTERNAL.filter((name) => new RegExp(`\\b${name}\\b`).test(text));
    expect(found).toEqual([]);
    // Page.walk is internal too; the word "walk" may appear in prose.
    expect(text).not.toMatch(/\bwalk\s*</);
  });

  it('still declare the public API (the check above looks at real files)', () => {
    const text = readFileSync(`${root}dist/index.d.ts`, 'utf8');
    for (const name of [
      'BillingClient',
      'createAccessCache',
      'createUsageTracker',
      'PagePromise',
      'APIResource',
    ]) {
      expect(text, name).toMatch(new RegExp(`\\b${name}\\b`));
    }
  });
});
