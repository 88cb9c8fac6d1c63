import { defineConfig } from 'tsup';

// ky, p-retry and jose ship ESM only: the CJS build bundles them so `require('billing-sdk')`
// works even where Node cannot `require()` an ES module (--no-experimental-require-module).
const esmOnly = ['ky', 'p-retry', 'is-network-error', 'jose'];

const shared = { sourcemap: true, target: 'es2022' } as const;

export default defineConfig([
  // ESM: one file per module, so that with `sideEffects: false` an app's bundler drops every module
  // the app does not use (schemas, resources, jose). A single bundled file would keep them all.
  {
    ...shared,
    entry: ['src/**/*.ts', '!src/testing/**'],
    format: ['esm'],
    platform: 'neutral',
    bundle: false,
    clean: true,
    dts: { entry: { index: 'src/index.ts' } },
  },
  // CJS: one bundled file, with the ESM-only dependencies inside.
  {
    ...shared,
    entry: { index: 'src/index.ts' },
    format: ['cjs'],
    platform: 'neutral',
    noExternal: esmOnly,
    dts: true,
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
