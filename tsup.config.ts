import { defineConfig } from 'tsup';

// ky, p-retry and jose ship ESM only: the CJS build bundles them so `require('billing-sdk')`
// works even where Node cannot `require()` an ES module (--no-experimental-require-module).
const esmOnly = ['ky', 'p-retry', 'is-network-error', 'jose'];
// The mock server's framework is bundled into the testing entry so that hono is not a runtime
// dependency of the SDK.
const mockOnly = ['hono', '@hono/node-server'];

export default defineConfig([
  {
    entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts' },
    format: ['esm'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'es2022',
    platform: 'neutral',
    noExternal: mockOnly,
    external: ['zod', 'ky', 'p-retry', 'jose'],
    treeshake: true,
  },
  {
    entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts' },
    format: ['cjs'],
    dts: true,
    sourcemap: true,
    target: 'es2022',
    platform: 'neutral',
    noExternal: [...esmOnly, ...mockOnly],
    external: ['zod'],
  },
]);
