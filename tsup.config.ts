import { defineConfig } from 'tsup';

// ky, p-retry and jose ship ESM only: the CJS build bundles them so `require('billing-sdk')`
// works even where Node cannot `require()` an ES module (--no-experimental-require-module).
const esmOnly = ['ky', 'p-retry', 'is-network-error', 'jose'];

const shared = { dts: true, sourcemap: true, target: 'es2022', treeshake: true } as const;

export default defineConfig([
  // The main entry runs anywhere fetch exists: no Node built-in may creep in.
  { ...shared, entry: { index: 'src/index.ts' }, format: ['esm'], platform: 'neutral', clean: true },
  { ...shared, entry: { index: 'src/index.ts' }, format: ['cjs'], platform: 'neutral', noExternal: esmOnly },
  // The mock server is Node-only. hono is bundled into it so that it is not a runtime dependency.
  {
    ...shared,
    entry: { 'testing/index': 'src/testing/index.ts' },
    format: ['esm'],
    platform: 'node',
    noExternal: ['hono'],
  },
  {
    ...shared,
    entry: { 'testing/index': 'src/testing/index.ts' },
    format: ['cjs'],
    platform: 'node',
    noExternal: ['hono', ...esmOnly],
  },
]);
