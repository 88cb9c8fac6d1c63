import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

// billing-sdk/redis is bundled on its own (tsup): it must not pull in a Redis client (the
// application passes its own; `redis` is an optional peer) nor any runtime code of the main entry,
// which would then ship twice.
describe('the billing-sdk/redis entry', () => {
  it('bundles only its own modules: no Redis package, nothing of the core or the webhooks at runtime', async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('../../src/redis/index.ts', import.meta.url))],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'neutral',
      format: 'esm',
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs).map((path) => path.replace(/^.*?src\//, 'src/'));
    expect(inputs.sort()).toEqual([
      'src/redis/client.ts',
      'src/redis/dedupe-store.ts',
      'src/redis/index.ts',
      'src/redis/rate-limiter.ts',
    ]);
  });
});
