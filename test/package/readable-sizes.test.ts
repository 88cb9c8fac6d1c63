import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Every module of src/ is short enough to read in one sitting, and every function short enough to
// hold in one's head: 450 lines a file (fixture data excepted), 150 a function, measured from the
// function's first token to its closing brace by TypeScript's own parser.
const MAX_FILE_LINES = 450;
const MAX_FUNCTION_LINES = 150;
/** Data, not logic: the mock's seed is a table of demo records. */
const FIXTURE_DATA = new Set(['src/testing/seed.ts']);

const root = fileURLToPath(new URL('../..', import.meta.url));
const sources = (readdirSync(join(root, 'src'), { recursive: true }) as string[])
  .filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))
  .map((path) => `src/${path.replaceAll('\\', '/')}`)
  .sort();

/** `path:line name (n lines)` of every function in `path` longer than the limit. */
function longFunctions(path: string, text: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const long: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(node.end).line;
      const name =
        node.name?.getText(file) ??
        (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(file) : '(anonymous)');
      if (last - first + 1 > MAX_FUNCTION_LINES)
        long.push(`${path}:${first + 1} ${name} (${last - first + 1} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return long;
}

describe('readable at every size', () => {
  it(`no file in src/ over ${MAX_FILE_LINES} lines (fixture data excepted)`, () => {
    expect(sources.length).toBeGreaterThan(100);
    const long = sources
      .filter((path) => !FIXTURE_DATA.has(path))
      .map((path) => [path, readFileSync(join(root, path), 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > MAX_FILE_LINES)
      .map(([path, lines]) => `${path} (${lines} lines)`);
    expect(long).toEqual([]);
  });

  it(`no function in src/ over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = sources.flatMap((path) => longFunctions(path, readFileSync(join(root, path), 'utf8')));
    expect(long).toEqual([]);
  });

  it('the measure sees a long function, declared or arrow', () => {
    const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  const v${i} = ${i};`).join('\n');
    expect(longFunctions('x.ts', `export function big() {\n${body}\n}\n`)).toEqual([
      'x.ts:1 big (152 lines)',
    ]);
    expect(longFunctions('x.ts', `const f = () => {\n${body}\n};\n`)).toEqual(['x.ts:1 f (152 lines)']);
  });
});
