/**
 * The part of jose that signing needs, loaded on first use by `signHostedLink`: an app that never
 * signs a link never downloads jose (bundlers put a dynamic import in its own chunk), and one that
 * does gets only `SignJWT`, not the whole library. (`verifyHostedLink` imports jose's verify
 * part statically: no client code reaches it, so only apps that verify links bundle it.)
 */
export { SignJWT } from 'jose';
