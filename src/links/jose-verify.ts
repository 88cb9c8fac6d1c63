/**
 * The part of jose that verifying needs, loaded on first use by `verifyHostedLink`, like
 * jose-sign.ts for signing: importing the SDK does not load jose (about a third of its import
 * time in Node), and an app that never verifies a link never downloads this part.
 */
export { errors, jwtVerify } from 'jose';
