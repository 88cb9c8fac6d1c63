import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

// ky, p-retry and jose ship ESM only: the CJS build bundles them so `require('billing-sdk')`
// works even where Node cannot `require()` an ES module (--no-experimental-require-module).
const esmOnly = ['ky', 'p-retry', 'is-network-error', 'jose'];

// Built-ins keep their `node:` prefix: Deno resolves only the prefixed form.
const shared = { sourcemap: true, target: 'es2022', removeNodeProtocol: false, external: [/^node:/] };

/**
 * Server builds validate with classic zod, whose object parser is compiled (`new Function`) and
 * about 4x faster per page than zod/mini's interpreted one. The browser build keeps zod/mini: it is
 * a fraction of the size and needs no eval, which a page's Content-Security-Policy may forbid. The
 * schemas use only functions both share (`z.looseObject`, `z.optional`, …).
 */
const classicZod = {
  // tsup marks dependencies external before any plugin of ours runs; `noExternal` lets `zod/mini`
  // through to the plugin, which makes it an external `zod`.
  noExternal: ['zod/mini'],
  esbuildPlugins: [
    {
      name: 'classic-zod',
      setup(build: {
        onResolve: (o: { filter: RegExp }, f: () => { path: string; external: boolean }) => void;
      }) {
        build.onResolve({ filter: /^zod\/mini$/ }, () => ({ path: 'zod', external: true }));
      },
    },
  ],
};

/**
 * The browser/worker build's one swap: it compiles `src/platform/browser.ts` in the place of
 * `src/platform/server.ts`, which gathers everything that differs between the builds (what and why:
 * the comment at the top of server.ts). Nothing else in the source differs between builds.
 */
const platformSwap = {
  name: 'platform-swap',
  setup(build: { onLoad: (o: { filter: RegExp }, f: () => { contents: string; loader: 'ts' }) => void }) {
    build.onLoad({ filter: /src[\\/]platform[\\/]server\.ts$/ }, () => ({
      contents: readFileSync(new URL('./src/platform/browser.ts', import.meta.url), 'utf8'),
      loader: 'ts',
    }));
  },
};

/**
 * Declarations leave out what is marked `@internal` (the request path behind `APIResource`, its
 * endpoints and options): the published types are the public API only (test/package/declarations.test.ts).
 */
const dts = { compilerOptions: { stripInternal: true } };

export default defineConfig([
  // ESM for servers (Node, Deno, Bun): the SDK's own code; its dependencies are imported from
  // node_modules, so npm dedupes them with the application's copies and a fix in one reaches users
  // without a release of ours. The engine, ky and jose's signing part load on first use.
  {
    ...shared,
    entry: { index: 'src/index.ts' },
    format: ['esm'],
    platform: 'neutral',
    splitting: true,
    dts,
    ...classicZod,
  },
  // ESM for app bundlers (the `browser` condition: browsers, workers): one file per module and
  // `sideEffects: false`, so a bundler drops every module an app does not use.
  {
    ...shared,
    entry: [
      'src/**/*.ts',
      '!src/testing/**',
      '!src/redis/**',
      '!src/postgres/**',
      '!src/node/**',
      // Only server.ts imports these (and the browser build compiles browser.ts there instead).
      '!src/platform/browser.ts',
      '!src/platform/undici-engine.ts',
      '!src/platform/default-engine.ts',
      '!src/platform/load-*.ts',
      '!src/platform/user-agent.ts',
    ],
    outDir: 'dist/browser',
    format: ['esm'],
    platform: 'neutral',
    bundle: false,
    esbuildPlugins: [platformSwap],
  },
  // CJS: one file with the ESM-only dependencies inside (zod ships CJS and is required). No source
  // map: it would be mostly ky's, p-retry's and jose's sources, and the code is not minified.
  {
    ...shared,
    sourcemap: false,
    entry: { index: 'src/index.ts' },
    format: ['cjs'],
    platform: 'neutral',
    dts,
    ...classicZod,
    noExternal: [...esmOnly, ...classicZod.noExternal],
  },
  // `billing-sdk/redis`: the shared dedupe store and cooldown. It imports no Redis client (the
  // application passes its own in), so it is neutral like the main entry.
  {
    ...shared,
    entry: { 'redis/index': 'src/redis/index.ts' },
    format: ['esm', 'cjs'],
    platform: 'neutral',
    dts,
  },
  // `billing-sdk/postgres`: the transactional outbox spool. It imports no Postgres driver (the
  // application passes its pool, client or postgres.js `sql` in), so it is neutral like the main entry.
  {
    ...shared,
    entry: { 'postgres/index': 'src/postgres/index.ts' },
    format: ['esm', 'cjs'],
    platform: 'neutral',
    dts,
  },
  // `billing-sdk/ai`: the AI meter. It imports no provider library (openai, @anthropic-ai/sdk and
  // ai are read by their shapes), so it is neutral like the main entry.
  {
    ...shared,
    entry: { 'ai/index': 'src/ai/index.ts' },
    format: ['esm', 'cjs'],
    platform: 'neutral',
    dts,
    ...classicZod,
  },
  // `billing-sdk/view`: the browser's account view. Its own bundle of a few hundred bytes: it reads
  // the app's `gate.state` endpoint and imports nothing that pulls zod, ky or jose.
  {
    ...shared,
    entry: { 'view/index': 'src/view/index.ts' },
    format: ['esm', 'cjs'],
    platform: 'browser',
    dts,
  },
  // `billing-sdk/node`: Node-only helpers (the file spool), never part of the main entry.
  {
    ...shared,
    entry: { 'node/index': 'src/node/index.ts' },
    format: ['esm', 'cjs'],
    platform: 'node',
    dts,
  },
  // The mock server is Node-only, and so is `npx billing-sdk-mock` (src/testing/bin.ts keeps its
  // `#!` line), which shares its chunks. hono is bundled in so that it is not a runtime
  // dependency; no source maps, which would be mostly hono's sources.
  {
    ...shared,
    sourcemap: false,
    entry: { 'testing/index': 'src/testing/index.ts', 'bin/billing-sdk-mock': 'src/testing/bin.ts' },
    format: ['esm'],
    platform: 'node',
    splitting: true,
    noExternal: ['hono'],
    dts: { ...dts, entry: { 'testing/index': 'src/testing/index.ts' } },
  },
  // `npx billing-sdk` (src/cli/bin.ts keeps its `#!` line): relay, dead-letters and doctor, Node
  // only. The database drivers stay external: optional peer dependencies, imported when a flag
  // names their database.
  {
    ...shared,
    sourcemap: false,
    entry: { 'bin/billing-sdk': 'src/cli/bin.ts' },
    format: ['esm'],
    platform: 'node',
    ...classicZod,
  },
  {
    ...shared,
    sourcemap: false,
    entry: { 'testing/index': 'src/testing/index.ts' },
    format: ['cjs'],
    platform: 'node',
    noExternal: ['hono', ...esmOnly],
    dts,
  },
]);
