import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Every ```ts block of the README, as a user pastes it, against the built package (npm test builds
// first). The blocks are written inside the project, so `billing-sdk` resolves to the package
// itself through its `exports`, exactly as from node_modules after an install.
const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = `${root}.readme-check/`;
const readme = readFileSync(`${root}README.md`, 'utf8');
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');

/** `billing` is the one name a block may use without declaring it: the client of the quickstart. */
const clientPreamble = (block: string) =>
  /\bbilling\b/.test(block) && !/\b(?:const|let|var)\s+billing\b/.test(block)
    ? "import type { BillingClient as QuickstartClient } from 'billing-sdk';\ndeclare const billing: QuickstartClient;\n"
    : '';

/** Import declarations at the top of a block, and the rest. */
function split(block: string): { imports: string; body: string } {
  const imports = block.match(/^(?:import[\s\S]*?from\s+'[^']+';\n)+/)?.[0] ?? '';
  return { imports, body: block.slice(imports.length) };
}

const tsconfig = {
  compilerOptions: {
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    module: 'node16',
    moduleResolution: 'node16',
    target: 'es2022',
    lib: ['es2023'],
    types: ['node'],
    skipLibCheck: true,
    noEmit: true,
  },
  include: ['*.mts', '*.cts'],
};

beforeAll(() => {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  writeFileSync(`${dir}tsconfig.json`, JSON.stringify(tsconfig));
  blocks.forEach((block, i) => {
    const preamble = clientPreamble(block);
    // ESM: verbatim (top-level await and all).
    writeFileSync(`${dir}block-${i}.mts`, preamble + block);
    // CommonJS: no top-level await there, so the body goes into an async function, as the README says.
    const { imports, body } = split(block);
    writeFileSync(
      `${dir}block-${i}.cts`,
      `${imports}${preamble}export async function main(): Promise<void> {\n${body}}\n`,
    );
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('README.md', () => {
  it('has ts blocks, and its first one uses only what it declares', () => {
    expect(blocks.length).toBeGreaterThan(10);
    expect(clientPreamble(blocks[0] ?? '')).toBe('');
  });

  it('every ts block type-checks on its own, as ESM and as CommonJS, under strict, noUncheckedIndexedAccess and exactOptionalPropertyTypes', () => {
    let output = '';
    try {
      execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', dir], {
        encoding: 'utf8',
      });
    } catch (error) {
      output = (error as { stdout?: string }).stdout ?? String(error);
    }
    // Name each failing block by its first line, so the README section is easy to find.
    const failing = [...new Set([...output.matchAll(/block-(\d+)\.[mc]ts/g)].map((m) => Number(m[1])))];
    const where = failing.map((i) => `block ${i}: ${(blocks[i] ?? '').split('\n')[0]}`).join('\n');
    expect(output, `${where}\n\n${output}`).toBe('');
  }, 120_000);

  it('the quickstart runs as it is against the embedded mock', () => {
    writeFileSync(`${dir}quickstart.mjs`, blocks[0] ?? '');
    const out = execFileSync(process.execPath, [`${dir}quickstart.mjs`], { encoding: 'utf8', cwd: dir });
    expect(out).toContain('active: true');
    expect(out).toMatch(/\d+ completed transactions, \d+ on the first page/);
    expect(out).toMatch(/\d+ open invoices/);
    expect(out).toContain('debited, 995 credits left');
    expect(out).toContain('not found: Account not found or invalid subscription tier');
  }, 60_000);
});
