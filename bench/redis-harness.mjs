// The tests' Redis harness (test/redis/*.ts) for the bench: a redis-server, a replica of one, and a
// 3-master, 3-replica Redis Cluster, started exactly as the tests start them. The TypeScript files are
// bundled here with esbuild (loaded only when called) into one temporary module, their vitest hooks
// replaced by no-ops (only the start functions are used); each file kills what it started when this
// process exits, however it exits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const testRedis = fileURLToPath(new URL('../test/redis/', import.meta.url));

/**
 * The harness's start functions: `startRedisServer()` (test/redis/redis-server.ts),
 * `startReplica(masterPort)` (replica-server.ts) and `startCluster()` (cluster.ts).
 * @returns {Promise<{startRedisServer: () => Promise<any>, startReplica: (port: number) => Promise<any>, startCluster: () => Promise<any>}>}
 */
export async function loadRedisHarness() {
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-bench-redis-'));
  try {
    const file = join(dir, 'harness.mjs');
    await build({
      stdin: {
        contents: [
          "export { startRedisServer } from './redis-server.ts';",
          "export { startReplica } from './replica-server.ts';",
          "export { startCluster } from './cluster.ts';",
        ].join('\n'),
        resolveDir: testRedis,
        loader: 'ts',
      },
      outfile: file,
      bundle: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'error',
      plugins: [
        {
          name: 'no-vitest',
          setup(b) {
            b.onResolve({ filter: /^vitest$/ }, () => ({ path: 'vitest', namespace: 'stub' }));
            b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({
              contents: 'export const beforeAll = () => {}; export const afterAll = () => {};',
            }));
          },
        },
      ],
    });
    return await import(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
