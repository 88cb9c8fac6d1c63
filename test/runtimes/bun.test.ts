import { describeServerRuntime } from './server-runtime.js';

// Bun resolves `billing-sdk` in scenario.mjs natively by self-reference through package.json
// "exports", with its conditions "bun", "node", "import": the server build, dist/index.js.
// --no-install: node_modules is there; Bun must never fetch packages of its own during a test.
describeServerRuntime('bun', 'Bun.serve', (config) => ['--no-install', 'test/runtimes/serve.mjs', config]);
