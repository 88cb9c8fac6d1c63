import { afterAll, beforeAll } from 'vitest';
import { type PostgresCluster, startPostgres } from '../../scripts/servers.mjs';

// The cluster harness itself is scripts/servers.mjs (plain JS, shared with the bench); this file adds
// vitest's hooks.
export { PG_BIN, type PostgresCluster, startPostgres } from '../../scripts/servers.mjs';

/** One cluster for the file: started before the first test, stopped (and removed) after the last. */
export function usePostgres(): { readonly cluster: PostgresCluster } {
  const ref = {} as { cluster: PostgresCluster };
  beforeAll(async () => {
    ref.cluster = await startPostgres();
  }, 60_000);
  afterAll(() => ref.cluster?.stop());
  return ref;
}
