/**
 * What differs between the server builds (Node, Deno, Bun: this module) and the browser/worker
 * build, in one place. The browser/worker build compiles `browser.ts` (beside this file) in this
 * module's place: the one swap of that build, made by `platformSwap` in tsup.config.ts. Code that
 * needs one of these imports it from here, never from the modules behind it, so nothing else in
 * the source differs between builds. `test/platform.test.ts` checks that both sides export the
 * same names with the same types.
 *
 * - `userAgent`: the `user-agent` header naming the runtime. Browsers forbid setting it, and workers
 *   have none of the runtimes it names: `{}` there.
 * - `defaultEngine`: ky's engine when the user gives no `fetch`: in Node undici's dispatcher API
 *   (loaded on the first request); none in the browser build, which must not see undici or
 *   node:zlib.
 * - `diagnosticsModule`: `node:diagnostics_channel` (imported on servers; in the browser/worker build
 *   taken from `process.getBuiltinModule` where the runtime has it, as workerd with `nodejs_compat`
 *   does, so browsers see no Node built-in and publish nothing).
 * - `loadPRetry`, `loadJoseVerify`: loaded on first use on servers (import time); static in
 *   bundles, where a chunk of their own would cost more bytes than it saves (p-retry) or be shared
 *   with signing (jose's verify part).
 * - `warmRequestPath`: loads ky and (in Node) undici ahead of a first request (warm.ts); nothing to
 *   do in the browser build, whose first request loads no more than any other.
 */

export { defaultEngine } from './default-engine.js';
export { diagnosticsModule } from './diagnostics.js';
export { loadJoseVerify } from './load-jose-verify.js';
export { loadPRetry } from './load-p-retry.js';
export { userAgent } from './user-agent.js';
export { warmRequestPath } from './warm.js';
