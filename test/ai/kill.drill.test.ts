import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BillingClient, createUsageTracker } from '../../src/index.js';
import { fileSpool } from '../../src/node/index.js';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { buildChild, spawnChild } from '../redis/processes.js';
import { type FakeProvider, startFakeProvider } from './fake-provider.js';

// A process SIGKILLed right after a tracked AI call returned: the call's charge was in the file
// spool when the call returned, so a tracker started again on that spool records it, once.
let child: { file: string; remove(): void };
let mock: MockServer;
let provider: FakeProvider;
beforeAll(async () => {
  child = await buildChild('../ai/kill-child.ts');
  mock = await startMockServer();
  provider = await startFakeProvider();
}, 60_000);
afterAll(async () => {
  child?.remove();
  await mock?.close();
  await provider?.close();
});

describe('SIGKILL after a tracked call returned, on a file spool', () => {
  it('the charge is recorded after the restart, once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'billing-ai-kill-'));
    try {
      // The service answers usage events only after the kill: the child cannot have sent it.
      mock.faults.add({
        method: 'POST',
        path: '/api/usage/events/',
        delayMs: 60_000,
        times: Number.POSITIVE_INFINITY,
      });
      const c = spawnChild(child.file, {
        DIR: dir,
        API_KEY: mock.apiKey,
        BASE_URL: mock.baseUrl,
        PROVIDER: provider.origin,
        KEY: 'ai-kill-1',
      });
      await c.next((m) => m.type === 'done', 30_000);
      await c.kill('SIGKILL');
      mock.faults.clear();
      expect(mock.store.usageEvent('ai-kill-1')).toBeUndefined();
      const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl, logLevel: 'off' });
      const tracker = createUsageTracker(billing, { spool: fileSpool(dir) });
      await tracker.flush();
      await tracker.close();
      expect(mock.store.usageEvent('ai-kill-1')).toMatchObject({
        quantity: 18,
        metadata: { model: 'gpt-fake', input_tokens: 12, output_tokens: 6 },
      });
      expect(mock.store.usageEvents.filter((e) => e.event_key.startsWith('ai-kill'))).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
