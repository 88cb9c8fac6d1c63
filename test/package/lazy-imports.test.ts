import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useMockServer } from '../helpers.js';

// What `import 'billing-sdk'` costs in Node is what it loads: the server build defers every
// dependency a feature needs until that feature runs (guides/runtimes.md, "What loads when"). Run on dist/
// (npm test builds it first), in a child with a resolve hook that sees every import.
const fixture = fileURLToPath(new URL('./fixtures/loaded-modules.mjs', import.meta.url));
const mock = useMockServer();

describe('what the server build loads, and when', () => {
  it('importing loads zod only; the first call ky and undici; an access lookup nothing more', async () => {
    const env = {
      ...process.env,
      BILLING_API_KEY: mock.server.apiKey,
      BILLING_BASE_URL: mock.server.baseUrl,
    };
    const { stdout } = await promisify(execFile)(process.execPath, [fixture], { env, timeout: 30_000 });
    const loaded = JSON.parse(stdout) as Record<'afterImport' | 'afterCall' | 'afterLookup', string[]>;
    expect(loaded.afterImport).toEqual(['zod']);
    expect(loaded.afterCall).toEqual(expect.arrayContaining(['ky', 'undici', 'zod']));
    expect(loaded.afterCall).not.toContain('p-retry');
    expect(loaded.afterCall).not.toContain('jose');
    // The access cache keeps its answers in maps of its own (src/access/answer-table.ts).
    expect(loaded.afterLookup).toEqual(loaded.afterCall);
  });
});
