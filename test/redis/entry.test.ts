import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

// billing-sdk/redis is bundled on its own (tsup): it must not pull in a Redis client (the
// application passes its own; `redis` is an optional peer) nor the main entry's client, resources,
// webhooks, cache or tracker, which would then ship twice. Only the small checks and error classes
// its option checks throw come along (errors are recognised across copies by their brand); its one
// dependency, cluster-key-slot (the slot function both Redis clients use), stays external as tsup leaves it.
describe('the billing-sdk/redis entry', () => {
  it('bundles only its own modules and the checks and errors: no Redis package, no client, no webhooks', async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('../../src/redis/index.ts', import.meta.url))],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'neutral',
      format: 'esm',
      logLevel: 'silent',
      external: ['cluster-key-slot'],
    });
    const inputs = Object.keys(result.metafile.inputs).map((path) => path.replace(/^.*?src\//, 'src/'));
    const allowed = [
      'src/internal/checks.ts',
      'src/core/errors/index.ts',
      'src/core/errors/base.ts',
      'src/core/errors/api.ts',
      'src/core/errors/connection.ts',
      'src/core/errors/features.ts',
      'src/core/errors/table.ts',
      'src/core/errors/credits.ts',
      // The error index names every error class; the browser view's is a few lines with no imports.
      'src/core/errors/view.ts',
      'src/util/well-formed.ts',
      'src/util/redact.ts',
      'src/util/retry-after.ts',
      'src/util/safely.ts',
      'src/util/timers.ts',
      // The SDK's one random UUID (redisHoldStore's fence token).
      'src/util/uuid.ts',
      // The one deadline of a store's step, shared with the PostgreSQL hold store.
      'src/util/deadline.ts',
      // The hold stores' one ledger key and one set of argument checks, shared by every hold store.
      'src/credits/store.ts',
      'src/credits/store-args.ts',
      // The SDK's one rule of every `…Ms` option (issue 47 §3).
      'src/internal/duration.ts',
      // One reader of a stored event, shared with the PostgreSQL spool (it imports only types).
      'src/tracker/spooled-event.ts',
      // The stored form of a dead letter, shared with the file spool (it imports only types).
      'src/tracker/dead-letter-record.ts',
      // The durable-spool core every spool stands on.
      'src/tracker/spool-core.ts',
      // The cooldown's cap (MAX_COOLDOWN_MS), one figure for memoryCooldown and redisCooldown (it imports nothing).
      'src/core/cooldown.ts',
      // The one rule of what a spool can store (no NUL, no lone surrogate), kept by every spool.
      'src/tracker/storable-event.ts',
      // The claim outcomes the dedupe store checks a reply against, shared with the handlers (types beside it).
      'src/webhooks/dedupe.ts',
    ];
    const foreign = inputs.filter((path) => !path.startsWith('src/redis/') && !allowed.includes(path));
    expect(foreign).toEqual([]);
    expect(inputs).toContain('src/redis/access-store.ts');
  });
});
