import { describe, expect, it } from 'vitest';
import { text } from '../../src/internal/checks.js';
import { endpoint } from '../../src/internal/endpoint.js';
import type { Schema } from '../../src/internal/schema.js';

// Type-level tests: `npm run typecheck` (tsc over test/) compiles this file, and each
// `@ts-expect-error` fails the build if the line below it stops being an error.

interface Params {
  account_ref_id: string;
  note?: string | undefined;
}
// Never used to validate here: these endpoints are only built, not called.
const schema = {} as Schema<{ ok: boolean }>;

describe('endpoint<P, R, T>: rules keyed by the parameters', () => {
  it('takes one rule list per parameter, optional ones included, and builds from typed params', () => {
    const declared = endpoint<Params, { ok: boolean }, boolean>({
      operation: 'test.typed',
      method: 'GET',
      rules: { account_ref_id: [text], note: [text] },
      build: (params) => ({ path: `x/${params.account_ref_id}/`, query: { note: params.note } }),
      schema,
      transform: (data) => data.ok,
    });
    expect(declared.build({ account_ref_id: 'a' }).path).toBe('x/a/');
  });

  it('refuses a parameter without its rule, and a rule without its parameter', () => {
    const missing = () =>
      endpoint<Params, { ok: boolean }>({
        operation: 'test.missing',
        method: 'GET',
        // @ts-expect-error: `note` is a parameter of Params and has no rule
        rules: { account_ref_id: [text] },
        build: () => ({ path: 'x/' }),
        schema,
      });
    const extra = () =>
      endpoint<Params, { ok: boolean }>({
        operation: 'test.extra',
        method: 'GET',
        // @ts-expect-error: `page` is not a parameter of Params
        rules: { account_ref_id: [text], note: [text], page: [text] },
        build: () => ({ path: 'x/' }),
        schema,
      });
    const untyped = () =>
      endpoint<Params, { ok: boolean }>({
        operation: 'test.build',
        method: 'GET',
        rules: { account_ref_id: [text], note: [text] },
        // @ts-expect-error: build sees Params, which has no `email`
        build: (params) => ({ path: `x/${params.email}/` }),
        schema,
      });
    // The declarations are only compiled, never run: the point is that they do not compile.
    expect([missing, extra, untyped].every((f) => typeof f === 'function')).toBe(true);
  });
});
