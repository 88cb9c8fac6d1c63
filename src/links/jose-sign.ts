/**
 * The part of jose that signing needs, loaded on first use by `signHostedLink`: an app that never
 * signs a link never downloads jose (bundlers put a dynamic import in its own chunk), and one that
 * does gets only `SignJWT`, not the whole library. Verifying loads its part the same way (jose-verify.ts).
 */
export { SignJWT } from 'jose';
