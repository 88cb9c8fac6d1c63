import { afterAll, beforeAll } from 'vitest';
import { type RedisServer, startRedisServer } from '../../scripts/servers.mjs';

// The starter itself is scripts/servers.mjs (plain JS, shared with the bench); this file adds vitest's hooks.
export { type RedisServer, startRedisServer } from '../../scripts/servers.mjs';

/** One redis-server for the file: started before the first test, stopped after the last. */
export function useRedisServer(): { readonly server: RedisServer } {
  const ref = {} as { server: RedisServer };
  beforeAll(async () => {
    ref.server = await startRedisServer();
  });
  afterAll(() => ref.server?.stop());
  return ref;
}
