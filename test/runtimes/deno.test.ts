import { describeServerRuntime } from './server-runtime.js';

// `import ... from 'billing-sdk'` in scenario.mjs resolves by self-reference through package.json
// "exports", as for any npm package in a Deno project with a package.json (users write
// `npm:billing-sdk` or map it in deno.json; both resolve the same way). Deno's conditions are
// "deno", "node", "import": the server build, dist/index.js. Module loading needs no --allow-read,
// nothing reads the environment, so the one permission is loopback networking (the mock, Deno.serve).
describeServerRuntime('deno', 'Deno.serve', (config) => [
  'run',
  '--no-prompt',
  '--no-lock',
  '--node-modules-dir=manual',
  '--allow-net=127.0.0.1',
  'test/runtimes/serve.mjs',
  config,
]);
