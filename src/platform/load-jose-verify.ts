/**
 * jose's verify part, loaded on the first `verifyHostedLink`, so importing the SDK in Node does not
 * load it. The browser/worker build imports it statically instead (see server.ts): lazy there, it would share a chunk with the signing part and every app that signs would download
 * the verifying code too; static, a bundler drops it from apps that never verify.
 */
export function loadJoseVerify(): Promise<typeof import('./jose-verify.js')> {
  return import('./jose-verify.js');
}
