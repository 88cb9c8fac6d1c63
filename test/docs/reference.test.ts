import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The reference pages a user looks things up in (guides/errors.md, guides/environment.md) are
// compared with the code they describe, read from the source text: the error codes exist only as
// TypeScript unions, and the variables only as reads of the environment. A code, a class or a
// variable added to the code and not to the page (or the reverse) fails here.
const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** Every file under `dir` whose name ends with one of `endings`, relative to the repository root. */
function filesUnder(dir: string, endings: string[]): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => endings.some((ending) => name.endsWith(ending)))
    .map((name) => relative(root, join(root, dir, name)))
    .sort();
}

/** The code without its comments: TSDoc examples mention variables and values the code never uses. */
const code = (source: string) => source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

/** The lines of a markdown section: from its heading to the next heading of the same level or above. */
function section(markdown: string, heading: string): string {
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) return '';
  const end = lines.findIndex((line, i) => i > start && new RegExp(`^#{1,${level}} `).test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The table rows of a markdown text, each as its trimmed cells (the header and rule rows dropped). */
const rows = (markdown: string) =>
  markdown
    .split('\n')
    .filter((line) => line.startsWith('| ') && !/^\|[-| ]+\|$/.test(line))
    .slice(1)
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );

/** The names in backticks of a cell. */
const ticked = (cell = '') => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');

describe('guides/errors.md against src/core/errors/', () => {
  const sources = filesUnder('src/core/errors', ['.ts']).map((file) => code(read(file)));
  const all = sources.join('\n');
  const page = read('guides/errors.md');

  /** Each class declared, the class it extends, and the union that types its `code`, if any. */
  const classes = new Map<string, { extends: string; codes?: string[] }>();
  for (const m of all.matchAll(/export class (\w+) extends (\w+) \{([\s\S]*?)\n\}/g)) {
    const [, name = '', base = '', body = ''] = m;
    const union = /readonly code: (\w+);/.exec(body)?.[1];
    const declared = union ? new RegExp(`export type ${union} =([^;]*);`).exec(all)?.[1] : undefined;
    if (union && declared === undefined) throw new Error(`${name}.code is typed ${union}, not found`);
    classes.set(name, {
      extends: base,
      ...(declared === undefined
        ? {}
        : { codes: [...declared.matchAll(/'([^']+)'/g)].map((c) => c[1] ?? '').sort() }),
    });
  }
  const table = read('src/core/errors/table.ts');
  const listed = [
    ...(/export interface BillingErrorClasses \{([\s\S]*?)\n\}/.exec(code(table))?.[1] ?? '').matchAll(
      /^\s+(\w+): \w+;$/gm,
    ),
  ].map((m) => m[1] ?? '');

  it('reads the code: every class of BillingErrorClasses is declared, and some have codes', () => {
    expect(listed.length).toBeGreaterThan(20);
    for (const name of listed.filter((n) => n !== 'BillingError')) expect(classes.has(name), name).toBe(true);
    expect(classes.get('SpoolError')?.codes).toContain('locked');
    expect(classes.get('HostedLinkError')?.codes).toContain('missing_claim');
  });

  const documented = rows(section(page, '## Every class')).map(([cls, base]) => ({
    name: ticked(cls)[0] ?? '',
    extends: ticked(base)[0] ?? '',
  }));

  it('lists every class of BillingErrorClasses once, and no other', () => {
    expect(documented.map((row) => row.name).sort()).toEqual([...listed].sort());
  });

  it('says what each class extends, as the code declares it', () => {
    const declared = documented.map((row) => ({
      name: row.name,
      extends: row.name === 'BillingError' ? 'Error' : classes.get(row.name)?.extends,
    }));
    expect(documented).toEqual(declared);
  });

  it('lists each code of each class with a code, and no code that does not exist', () => {
    const coded = [...classes].filter(([, cls]) => cls.codes).map(([name]) => name);
    expect(coded.length).toBeGreaterThanOrEqual(4);
    const codes = section(page, '## Codes');
    const headings = [...codes.matchAll(/^### (\w+)$/gm)].map((m) => m[1]);
    expect(headings.sort()).toEqual(coded.sort());
    for (const name of coded) {
      const inPage = rows(section(codes, `### ${name}`)).map(([cell]) => ticked(cell)[0]);
      expect(inPage.sort(), name).toEqual(classes.get(name)?.codes);
    }
  });
});

describe('guides/environment.md against what src/ reads', () => {
  const page = read('guides/environment.md');
  const table = rows(page).map(([names, by]) => ({
    names: ticked(names),
    sdk: (by ?? '').startsWith('the SDK'),
  }));

  /** Names read from the environment anywhere in src/: `readEnv('X')`, `process.env.X`, `env.X` of `const env = process.env`. */
  const reads = new Map<string, Set<string>>();
  for (const file of filesUnder('src', ['.ts'])) {
    const text = code(read(file));
    if (!/process\.env|readEnv\(/.test(text) || file === 'src/util/env.ts') continue;
    const names = new Set(
      [
        ...text.matchAll(/readEnv\(\s*'(\w+)'/g),
        ...text.matchAll(/process\.env\??\.(\w+)/g),
        ...text.matchAll(/process\.env\[\s*'(\w+)'\s*\]/g),
        ...(/\b(?:const|let) env = process\.env\b/.test(text) ? text.matchAll(/\benv\.(\w+)/g) : []),
      ].map((m) => m[1] ?? ''),
    );
    reads.set(file, names);
  }
  const readBySdk = new Set([...reads.values()].flatMap((names) => [...names]));

  it('reads the code: each file that reads the environment names what it reads', () => {
    expect(readBySdk).toContain('BILLING_API_KEY');
    for (const [file, names] of reads)
      expect(names.size, `${file} reads the environment by a name not spelled out`).toBeGreaterThan(0);
  });

  it('lists every variable the SDK reads as read by the SDK, and nothing else as such', () => {
    const documented = table.filter((row) => row.sdk).flatMap((row) => row.names);
    expect(documented.sort()).toEqual([...readBySdk].sort());
  });

  it('marks the other names a convention, and they are names the SDK does not read', () => {
    for (const row of table.filter((r) => !r.sdk)) {
      for (const name of row.names) expect(readBySdk.has(name), name).toBe(false);
    }
    expect(rows(page).every(([, by]) => by?.startsWith('the SDK') || by === 'convention')).toBe(true);
  });

  it('has a row for every variable the README, the guides and the examples read', () => {
    const documents = [
      'README.md',
      'CONTRIBUTING.md',
      ...filesUnder('guides', ['.md']),
      ...filesUnder('examples', ['.mjs']),
    ];
    const used = new Set(
      documents.flatMap((file) => [...read(file).matchAll(/process\.env\.(\w+)/g)].map((m) => m[1] ?? '')),
    );
    expect(used.size).toBeGreaterThan(3);
    const listed = new Set(table.flatMap((row) => row.names));
    expect([...used].filter((name) => !listed.has(name))).toEqual([]);
  });
});

describe('no secret to copy', () => {
  const documents = [
    'README.md',
    'CONTRIBUTING.md',
    ...filesUnder('guides', ['.md']),
    ...filesUnder('examples', ['.mjs', '.js', '.ts']),
  ];
  const secret = /(?:KEY|SECRET|TOKEN|PASSWORD)/;

  it.each(documents)('%s: no secret variable falls back to a literal, and no key is written out', (file) => {
    const text = read(file);
    const fallbacks = [...text.matchAll(/process\.env(?:\.(\w+)|\[\s*'(\w+)'\s*\])\s*(?:\?\?|\|\|)\s*['"`]/g)]
      .filter((m) => secret.test(m[1] ?? m[2] ?? ''))
      .map((m) => m[0]);
    // A key written into code (the mock's own keys are `server.apiKey` and `server.signingKey`).
    const literals = [...text.matchAll(/\b(?:apiKey|signingKey)\s*[:=]\s*['"`][^'"`]+['"`]/g)].map(
      (m) => m[0],
    );
    expect([...fallbacks, ...literals]).toEqual([]);
  });

  it('also in the TSDoc examples of src/, which the API reference shows', () => {
    const found = filesUnder('src', ['.ts']).flatMap((file) =>
      [...read(file).matchAll(/process\.env\.(\w+)\s*(?:\?\?|\|\|)\s*['"`]/g)]
        .filter((m) => secret.test(m[1] ?? ''))
        .map((m) => `${file}: ${m[0]}`),
    );
    expect(found).toEqual([]);
  });
});

describe("the README's createGate signature against the gate's options", () => {
  it('names every option createGate checks (the rules are keyed by GateOptions), and no other', () => {
    const rules = /const rules = \{([\s\S]*?)\n\} satisfies Record<keyof GateOptions/.exec(
      code(read('src/gate/gate.ts')),
    )?.[1];
    const options = [...(rules ?? '').matchAll(/^ {2}(\w+):/gm)].map((m) => m[1] ?? '').sort();
    expect(options).toContain('onError');
    const signature = /`createGate\(\{([^}]*)\}\)`/.exec(read('README.md'))?.[1] ?? '';
    const documented = signature
      .split(',')
      .map((name) => name.trim().replace(/\?$/, ''))
      .sort();
    expect(documented).toEqual(options);
  });
});
