import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `npm run docs` is `typedoc` with typedoc.json: it fails on any warning (treatWarningsAsErrors),
// and an undocumented export or member is a warning (validation.notDocumented). It renders the
// README, the guides and CONTRIBUTING.md (projectDocuments) with the API reference into one site:
// TypeDoc rewrites a relative link to a project document into a link to its page (a link it cannot
// resolve would be copied as a raw file into media/). One run, with the project's own config,
// writing HTML to a temporary directory instead of docs/. `--skipErrorChecking`: `npm test` type-checks
// the project with tsc before this runs, and TypeDoc's own second type-check is most of its time
// (the run takes 10 s without it, 26 s with it, on 2 cores); every TypeDoc warning (an undocumented member, a broken link) is still
// raised. `npm run docs` keeps the full check.
const root = fileURLToPath(new URL('../..', import.meta.url));
const typedoc = join(root, 'node_modules', 'typedoc', 'bin', 'typedoc');

const guides = readdirSync(join(root, 'guides'))
  .filter((name) => name.endsWith('.md'))
  .sort();

/** The page TypeDoc writes for a document: its frontmatter title, spaces to underscores. */
const pageOf = (file: string) => {
  const title = /^---\ntitle: (.+)\n---\n/.exec(readFileSync(join(root, file), 'utf8'))?.[1];
  return `documents/${(title ?? file.replace(/^.*\//, '').replace(/\.md$/, '')).replace(/ /g, '_')}.html`;
};

let out: string;
let run: { status: number | null; output: string };

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'billing-sdk-docs-'));
  // Node itself rather than npx: npm prints its own warnings, which are not TypeDoc's.
  const result = spawnSync(process.execPath, [typedoc, '--out', out, '--skipErrorChecking'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    timeout: 110_000,
  });
  run = { status: result.status, output: `${result.stdout}${result.stderr}${result.error ?? ''}` };
}, 120_000);

afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

const page = (...path: string[]) => join(out, ...path);
const html = (page: string) => readFileSync(join(out, page), 'utf8');
/** Links of a page to other pages of the site (not assets, not the web). */
const siteLinks = (page: string) =>
  [...html(page).matchAll(/href="([^"]+)"/g)]
    .map((m) => m[1] ?? '')
    .filter((href) => !/^(?:[a-z]+:|#|\.\.\/|assets\/)/.test(href) && /\.html(?:#|$)/.test(href));

describe('the API reference (npm run docs)', () => {
  it('builds with no warning and no error: every export and member is documented', () => {
    const problems = run.output.split('\n').filter((line) => /\[(warning|error)\]/.test(line));
    expect(problems, run.output).toEqual([]);
    expect(run.status, run.output).toBe(0);
  });

  it('has a module per entry point, named as it is imported', () => {
    expect(existsSync(page('index.html'))).toBe(true);
    const modules = existsSync(page('modules')) ? readdirSync(page('modules')).join(', ') : 'no docs written';
    expect(existsSync(page('modules', 'billing-sdk.html')), modules).toBe(true);
    expect(existsSync(page('modules', 'billing-sdk_testing.html'))).toBe(true);
  });

  it('has a page for the client, its errors and the mock', () => {
    for (const name of ['BillingClient', 'APIError', 'NotFoundError']) {
      expect(existsSync(page('classes', `billing-sdk.${name}.html`)), name).toBe(true);
    }
    expect(existsSync(page('classes', 'billing-sdk_testing.MockStore.html'))).toBe(true);
  });

  it('says what the money fields hold, as the reference states it', () => {
    const text = (file: string) =>
      readFileSync(page('interfaces', file), 'utf8')
        .replace(/<[^>]+>/g, '')
        .replace(/\s+/g, ' ');
    const invoice = text('billing-sdk.Invoice.html');
    expect(invoice).toContain('does not say whether it is in major units');
    const transaction = text('billing-sdk.Transaction.html');
    expect(transaction).toContain('decimal string');
    expect(transaction).toContain('do not parseFloat money');
  });

  it('leaves internals out', () => {
    // Protected plumbing of the resource classes and the error classes' static brand.
    const accounts = readFileSync(page('interfaces', 'billing-sdk.Accounts.html'), 'utf8');
    expect(accounts).not.toContain('_call');
    const error = readFileSync(page('classes', 'billing-sdk.BillingError.html'), 'utf8');
    expect(error).not.toMatch(/>brand</);
  });
});

describe('the docs site (npm run docs)', () => {
  it('has a page for every guide and for CONTRIBUTING.md', () => {
    for (const file of [...guides.map((name) => `guides/${name}`), 'CONTRIBUTING.md']) {
      expect(existsSync(join(out, pageOf(file))), `${file} → ${pageOf(file)}`).toBe(true);
    }
  });

  it("turns the README's relative links into links to those pages, none copied as a raw file", () => {
    const links = siteLinks('index.html');
    for (const name of guides) expect(links, name).toContain(pageOf(`guides/${name}`));
    expect(links).toContain(pageOf('CONTRIBUTING.md'));
    expect(existsSync(join(out, 'media')) ? readdirSync(join(out, 'media')) : []).toEqual([]);
  });

  it('resolves every link between the pages of the guides, anchors included', () => {
    const broken: string[] = [];
    for (const page of ['index.html', ...readdirSync(join(out, 'documents')).map((p) => `documents/${p}`)]) {
      const base = page.startsWith('documents/') ? 'documents/' : '';
      for (const href of siteLinks(page)) {
        const [path = '', anchor] = href.split('#');
        const target = `${base}${path}`.replace(/^documents\/documents\//, 'documents/');
        if (!existsSync(join(out, target))) broken.push(`${page}: ${href}`);
        else if (anchor && !html(target).includes(`id="${anchor}"`))
          broken.push(`${page}: ${href} (no #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
