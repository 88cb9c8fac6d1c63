import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { usePostgres } from './cluster.js';

// examples/postgres-outbox.mjs needs a database: it runs here, on the test's own cluster, against the
// built package and the embedded mock (test/examples/examples.test.ts runs the others).
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const postgres = usePostgres();

describe('examples/postgres-outbox.mjs', () => {
  it('sends the committed event once, never the rolled-back one, and applies a redelivered webhook once', async () => {
    const { stdout } = await run(process.execPath, ['examples/postgres-outbox.mjs'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: postgres.cluster.url, BILLING_BASE_URL: '', BILLING_API_KEY: '' },
      timeout: 60_000,
    });
    expect(stdout).toMatch(/rep_2: the export failed after tracking: rolled back/);
    expect(stdout).toMatch(/rep_1 committed: its event recorded 1 time\(s\)/);
    expect(stdout).toMatch(/rows in example_exports: 1; usage events at the service: \d+/);
    expect(stdout).toMatch(/first delivery: 200 \{"received":true\}/);
    expect(stdout).toMatch(/redelivery: 200 \{"received":true\}/);
    expect(stdout).toMatch(/rows in example_grants for txn_example_1: 1/);
  }, 90_000);

  it('without DATABASE_URL says what it needs and exits 2', async () => {
    const env = { ...process.env, DATABASE_URL: '' };
    const error = await run(process.execPath, ['examples/postgres-outbox.mjs'], { cwd: root, env }).catch(
      (e: unknown) => e as { code?: number; stderr?: string },
    );
    expect(error).toMatchObject({ code: 2 });
    expect((error as { stderr?: string }).stderr).toMatch(/Set DATABASE_URL/);
  });
});
