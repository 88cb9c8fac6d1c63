import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Every ```ts (and ```tsx) block of the README, of each guide and of CONTRIBUTING.md, as a user pastes it, against
// the built package (npm test builds first). The blocks are written inside the project, so
// `billing-sdk` resolves to the package itself through its `exports`, exactly as from node_modules
// after an install.
const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = `${root}.readme-check/`;
const guides = readdirSync(`${root}guides`)
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `guides/${name}`);
const documents = ['README.md', ...guides, 'CONTRIBUTING.md'];

interface Block {
  /** The document it comes from, relative to the repository root. */
  file: string;
  code: string;
  /** `tsx` for a React component; `ts` otherwise. */
  lang: 'ts' | 'tsx';
  /** The base name of its files in `dir`: unique, and tells where the block is. */
  name: string;
}

const blocksOf = (file: string): Block[] =>
  [...readFileSync(`${root}${file}`, 'utf8').matchAll(/```(tsx?)\n([\s\S]*?)```/g)].map((m, i) => ({
    file,
    lang: m[1] as Block['lang'],
    code: m[2] ?? '',
    name: `${file.replace(/\.md$/, '').replace(/[^A-Za-z0-9]+/g, '-')}-block-${i}`,
  }));
const blocks = documents.flatMap(blocksOf);
const readme = blocks.filter((block) => block.file === 'README.md');

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
    jsx: 'react-jsx',
  },
  include: ['*.mts', '*.cts', '*.tsx'],
};

beforeAll(() => {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  writeFileSync(`${dir}tsconfig.json`, JSON.stringify(tsconfig));
  for (const { code, name, lang } of blocks) {
    const preamble = clientPreamble(code);
    // A React component: a .tsx module of an ESM package, as a bundler-based app has it.
    if (lang === 'tsx') {
      writeFileSync(`${dir}${name}.tsx`, preamble + code);
      continue;
    }
    // ESM: verbatim (top-level await and all).
    writeFileSync(`${dir}${name}.mts`, preamble + code);
    // A module that exports (a composable, a store) is a file of its own, not a script to run.
    if (/^export /m.test(code)) continue;
    // CommonJS: no top-level await there, so the body goes into an async function, as the README says.
    const { imports, body } = split(code);
    writeFileSync(
      `${dir}${name}.cts`,
      `${imports}${preamble}export async function main(): Promise<void> {\n${body}}\n`,
    );
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('README.md', () => {
  it('has ts blocks, and its first one uses only what it declares', () => {
    expect(readme.length).toBeGreaterThan(10);
    expect(clientPreamble(readme[0]?.code ?? '')).toBe('');
  });

  it('the quickstart runs as it is against the embedded mock', () => {
    writeFileSync(`${dir}quickstart.mjs`, readme[0]?.code ?? '');
    const out = execFileSync(process.execPath, [`${dir}quickstart.mjs`], { encoding: 'utf8', cwd: dir });
    expect(out).toContain('active: true');
    expect(out).toMatch(/\d+ completed transactions, \d+ on the first page/);
    expect(out).toMatch(/\d+ open invoices/);
    expect(out).toContain('debited, 995 credits left');
    expect(out).toContain('not found: Account not found or invalid subscription tier');
  }, 60_000);
});

describe('the guides', () => {
  // The glossary defines words; every other page shows them in code.
  it.each(guides.filter((file) => file !== 'guides/glossary.md'))('%s has ts blocks', (file) => {
    expect(blocksOf(file).length).toBeGreaterThan(0);
  });
});

describe('every ts block of the README, the guides and CONTRIBUTING.md', () => {
  it('type-checks on its own, as ESM and as CommonJS, under strict, noUncheckedIndexedAccess and exactOptionalPropertyTypes', () => {
    let output = '';
    try {
      execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', dir], {
        encoding: 'utf8',
      });
    } catch (error) {
      output = (error as { stdout?: string }).stdout ?? String(error);
    }
    // Name each failing block by its document and first line, so the section is easy to find.
    const failing = new Set([...output.matchAll(/([\w-]+-block-\d+)\.(?:[mc]ts|tsx)/g)].map((m) => m[1]));
    const where = blocks
      .filter((block) => failing.has(block.name))
      .map((block) => `${block.file}, ${block.name}: ${block.code.split('\n')[0]}`)
      .join('\n');
    expect(output, `${where}\n\n${output}`).toBe('');
  }, 180_000);
});
