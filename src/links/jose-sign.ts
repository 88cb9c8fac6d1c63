/**
 * The part of jose that signing needs, loaded on first use by `signHostedLink`: an app that never
 * signs a link never downloads jose (bundlers put a dynamic import in its own chunk), and one that
 * does gets only `SignJWT`, not the whole library. (`verifyHostedLink`'s part of jose,
 * platform/jose-verify.ts, is loaded on first use on servers and imported statically only in the
 * browser/worker build, where a bundler drops it from apps that never verify.)
 */
export { SignJWT } from 'jose';
