import { defineConfig } from 'tsup';

// ky, p-retry and jose ship ESM only: the CJS build bundles them so `require('billing-sdk')`
// works even where Node cannot `require()` an ES module (--no-experimental-require-module).
const esmOnly = ['ky', 'p-retry', 'is-network-error', 'jose'];

const shared = { sourcemap: true, target: 'es2022', removeNodeProtocol: false } as const;

/**
 * Server builds validate with classic zod, whose object parser is compiled (`new Function`) and
 * about 4x faster per page than zod/mini's interpreted one. The browser build keeps zod/mini: it is
 * a fraction of the size and needs no eval, which a page's Content-Security-Policy may forbid. The
 * schemas use only functions both share (`z.looseObject`, `z.optional`, …).
 */
const classicZod = {
  esbuildOptions(options: { alias?: Record<string, string> }) {
    options.alias = { ...options.alias, 'zod/mini': 'zod' };
  },
};

/**
 * In the browser build, `userAgent()` can only return `{}`: browsers forbid setting the header, and
 * workers have none of the runtimes it names (Deno and Bun load the server build). The stub keeps
 * that dead code out of every browser bundle.
 */
const noUserAgentInBrowsers = {
  name: 'no-user-agent-in-browsers',
  setup(build: { onLoad: (o: { filter: RegExp }, f: () => { contents: string; loader: 'ts' }) => void }) {
    build.onLoad({ filter: /src[\\/]core[\\/]user-agent\.ts$/ }, () => ({
      contents: 'export function userAgent(): Record<string, string> { return {}; }',
      loader: 'ts',
    }));
    // Browsers and workers run ky on their fetch: no undici, no node:zlib in their bundles.
    build.onLoad({ filter: /src[\\/]core[\\/]default-engine\.ts$/ }, () => ({
      contents: 'export function defaultEngine(): undefined { return undefined; }',
      loader: 'ts',
    }));
  },
};

export default defineConfig([
  // ESM for servers (Node, Deno, Bun): one file with zod, p-retry and ky inside, so an import
  // reads a single module instead of some hundred (Node's ESM loader pays per file). ky and jose's
  // signing part stay in their own chunks, loaded on first use.
  {
    ...shared,
    entry: { index: 'src/index.ts' },
    format: ['esm'],
    platform: 'neutral',
    splitting: true,
    noExternal: ['zod', 'p-retry', 'is-network-error', 'ky'],
    dts: true,
    ...classicZod,
  },
  // ESM for app bundlers (the `browser` condition: browsers, workers): one file per module and
  // `sideEffects: false`, so a bundler drops every module an app does not use.
  {
    ...shared,
    entry: ['src/**/*.ts', '!src/testing/**', '!src/redis/**', '!src/core/undici-engine.ts'],
    outDir: 'dist/browser',
    format: ['esm'],
    platform: 'neutral',
    bundle: false,
    esbuildPlugins: [noUserAgentInBrowsers],
  },
  // CJS: one bundled file, with the ESM-only dependencies inside.
  {
    ...shared,
    entry: { index: 'src/index.ts' },
    format: ['cjs'],
    platform: 'neutral',
    noExternal: [...esmOnly, 'zod'],
    dts: true,
    ...classicZod,
  },
  // `billing-sdk/redis`: the shared dedupe store and cooldown. It imports no Redis client (the
  // application passes its own in), so it is neutral like the main entry.
  {
    ...shared,
    entry: { 'redis/index': 'src/redis/index.ts' },
    format: ['esm', 'cjs'],
    platform: 'neutral',
    dts: true,
  },
  // `npx billing-sdk-mock`: the mock as a standalone server, for tests in other languages and processes.
  {
    ...shared,
    entry: { 'bin/billing-sdk-mock': 'src/testing/bin.ts' },
    format: ['esm'],
    platform: 'node',
    noExternal: ['hono'],
    banner: { js: '#!/usr/bin/env node' },
  },
  // The mock server is Node-only. hono is bundled into it so that it is not a runtime dependency.
  {
    ...shared,
    entry: { 'testing/index': 'src/testing/index.ts' },
    format: ['esm'],
    platform: 'node',
    noExternal: ['hono'],
    dts: true,
  },
  {
    ...shared,
    entry: { 'testing/index': 'src/testing/index.ts' },
    format: ['cjs'],
    platform: 'node',
    noExternal: ['hono', ...esmOnly],
    dts: true,
  },
]);
