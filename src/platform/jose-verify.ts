/** The part of jose that `verifyHostedLink` needs, from jose's subpaths (see load-jose-verify.ts). */
export { JOSEAlgNotAllowed, JWSSignatureVerificationFailed, JWTExpired } from 'jose/errors';
export { jwtVerify } from 'jose/jwt/verify';
