import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type IForbiddenRuleType } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';

// The layering of src/ is checked by `depcruise src` in `npm run lint`, with the rules of
// .dependency-cruiser.cjs. These tests run the same rules through dependency-cruiser's API: on the
// tree itself, and on small trees with one planted fault each, to show the rules can fail.
const root = fileURLToPath(new URL('../..', import.meta.url));
const config = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs')) as {
  forbidden: IForbiddenRuleType[];
  options: { includeOnly: string; tsPreCompilationDeps: boolean };
};
const scratch = mkdtempSync(join(tmpdir(), 'billing-layers-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Violations of the project's rules in the tree at `baseDir`, as `rule: from -> to`. */
async function violations(baseDir: string): Promise<{ found: string[]; cruised: number }> {
  const result = await cruise(['src'], {
    ruleSet: { forbidden: config.forbidden },
    validate: true,
    includeOnly: config.options.includeOnly,
    tsPreCompilationDeps: config.options.tsPreCompilationDeps,
    baseDir,
  });
  const output = result.output as Exclude<typeof result.output, string>;
  return {
    found: output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`),
    cruised: output.summary.totalCruised,
  };
}

let trees = 0;
/** A scratch tree of `files` (path -> source) under src/. */
function tree(files: Record<string, string>): string {
  const dir = join(scratch, String(trees++));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
    writeFileSync(join(dir, 'src', path), source);
  }
  return dir;
}

describe('the layering of src/ (.dependency-cruiser.cjs)', () => {
  it('holds on the tree: no upward import, no cycle, no entry importing another', async () => {
    const { found, cruised } = await violations(root);
    expect(found).toEqual([]);
    expect(cruised).toBeGreaterThan(100);
  });

  it('fails on a planted upward import, type-only included', async () => {
    const dir = tree({
      'core/logger.ts': "import type { ApiCore } from '../internal/request.js';\nexport type L = ApiCore;\n",
      'internal/request.ts': 'export class ApiCore {}\n',
      'platform/server.ts': "import { redact } from '../util/redact.js';\nexport const p = redact;\n",
      'util/redact.ts': 'export const redact = 1;\n',
    });
    expect((await violations(dir)).found).toEqual([
      'core-imports-upward: src/core/logger.ts -> src/internal/request.ts',
      'platform-imports-upward: src/platform/server.ts -> src/util/redact.ts',
    ]);
  });

  it('fails on a planted cycle inside one layer, and on an entry importing another', async () => {
    const dir = tree({
      'testing/seed.ts': "import type { MockStore } from './store.js';\nexport type S = MockStore;\n",
      'testing/store.ts': "import { loadSeed } from './seed.js';\nexport class MockStore { s = loadSeed; }\n",
      'index.ts': "export * from './redis/index.js';\n",
      'redis/index.ts': 'export const r = 1;\n',
    });
    const { found } = await violations(dir);
    expect(found).toContain('no-circular: src/testing/seed.ts -> src/testing/store.ts');
    expect(found).toContain('entries-stay-apart: src/index.ts -> src/redis/index.ts');
  });
});
