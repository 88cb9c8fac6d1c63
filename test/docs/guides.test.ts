import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The README is the npm page, short; the rest lives in guides/ (one per task) and CONTRIBUTING.md.
// The guides ship in the package and render with the API reference (typedoc.json's
// projectDocuments), so every relative link between them must resolve as a file here, on GitHub and
// in an installed copy. site.test.ts checks the rendered site.
const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const guides = readdirSync(join(root, 'guides'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `guides/${name}`);
const documents = ['README.md', ...guides, 'CONTRIBUTING.md'];

/** The text outside fenced code blocks: a `#` comment in a shell block is not a heading. */
const prose = (markdown: string) => markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/**
 * The anchors of a file's headings as both GitHub and the docs site make them: TypeDoc leaves a
 * heading's code spans out of its anchor, so only a heading the two agree on can be linked.
 */
const anchorsOf = (file: string) =>
  new Set(
    [...prose(read(file)).matchAll(/^#{1,6}\s+(.+)$/gm)]
      .map((m) => m[1] ?? '')
      .filter((heading) => slug(heading) === slug(heading.replace(/`[^`]*`/g, '')))
      .map(slug),
  );

/** Markdown links that are not absolute URLs: `[text](target)`. */
const relativeLinks = (file: string) =>
  [...prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));

describe('README.md, the npm page', () => {
  it('is at most 450 lines', () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(450);
  });

  it('links every guide relatively, and CONTRIBUTING.md', () => {
    const links = relativeLinks('README.md').map((target) => target.split('#')[0]);
    for (const guide of guides) expect(links, guide).toContain(guide);
    expect(links).toContain('CONTRIBUTING.md');
  });
});

describe('the guides', () => {
  it('are the tasks and the pages for operating the SDK, each titled for the docs site', () => {
    expect(guides).toEqual([
      'guides/access-cache.md',
      'guides/ai.md',
      'guides/browser-state.md',
      'guides/choosing.md',
      'guides/credits.md',
      'guides/environment.md',
      'guides/errors.md',
      'guides/failures.md',
      'guides/gating-routes.md',
      'guides/glossary.md',
      'guides/observability.md',
      'guides/operating.md',
      'guides/postgres.md',
      'guides/production.md',
      'guides/runtimes.md',
      'guides/serverless.md',
      'guides/several-instances.md',
      'guides/testing.md',
      'guides/troubleshooting.md',
      'guides/upgrading.md',
      'guides/usage-tracking.md',
    ]);
    for (const guide of guides) expect(read(guide), guide).toMatch(/^---\ntitle: .+\n---\n/);
  });

  it('render with the API reference (typedoc.json) and ship in the package (package.json "files")', () => {
    const typedoc = JSON.parse(read('typedoc.json')) as { projectDocuments?: string[] };
    expect(typedoc.projectDocuments).toContain('guides/*.md');
    const pkg = JSON.parse(read('package.json')) as { files: string[] };
    expect(pkg.files).toContain('guides');
    expect(pkg.files).toContain('README.md');
    // The upgrade notes link the CHANGELOG, which ships in the package and renders as a page too.
    expect(typedoc.projectDocuments).toContain('CHANGELOG.md');
    expect(pkg.files).toContain('CHANGELOG.md');
  });
});

describe('the README and the guides, written for users', () => {
  // Figures are claims with the command that reproduces them, and that command runs in a clone (the
  // bench and the drills do not ship in the package); no test file, machine or session is quoted.
  it.each(['README.md', ...guides])('%s reads as a guide, not a lab notebook', (file) => {
    const lines = prose(read(file)).split('\n');
    const notebook = lines.filter((line) =>
      /measured here|we waited|installable here|this machine|\b\d+-core machine|\btest\/[\w/.-]+\.test\.ts\b/i.test(
        line,
      ),
    );
    const commands = lines.filter(
      (line) => /npm run (?:bench|test:drills)/.test(line) && !/in a clone/.test(line),
    );
    expect([...notebook, ...commands]).toEqual([]);
  });
});

describe('relative links between the README, the guides and CONTRIBUTING.md', () => {
  it.each(documents)('%s: each names a file that exists, and a heading of it', (file) => {
    const broken: string[] = [];
    for (const target of relativeLinks(file)) {
      const [path = '', anchor] = target.split('#');
      const to = path === '' ? file : normalize(join(dirname(file), path));
      if (!existsSync(join(root, to))) broken.push(`${target}: no file ${to}`);
      else if (anchor !== undefined && to.endsWith('.md') && !anchorsOf(to).has(anchor)) {
        broken.push(
          `${target}: no heading #${anchor} in ${to} (or one with code in it, which the docs site anchors apart)`,
        );
      }
    }
    expect(broken).toEqual([]);
  });
});
