import { HostedLinkError } from '../core/errors/index.js';
import { loadJoseVerify } from '../platform/server.js';
import { isWellFormed } from '../util/well-formed.js';

/** The claims of a hosted-link token. */
export interface HostedLinkClaims {
  /** The account the link was signed for. */
  account_ref_id: string;
  /** Issued at, seconds since the epoch. */
  iat?: number | undefined;
  /** Expires at, seconds since the epoch (only when signed with `expiresIn`). */
  exp?: number | undefined;
  /** Any other claim. */
  [claim: string]: unknown;
}

/** What {@link verifyHostedLink} returns. */
export interface VerifiedHostedLink {
  /** The account the link was signed for. */
  account_ref_id: string;
  /** Every claim of the token. */
  claims: HostedLinkClaims;
}

const encoder = new TextEncoder();

/**
 * Verifies a hosted-link token (or a URL carrying it as `u`) as the service does: HS256 only, so
 * `alg: none` and every other algorithm are refused; the `account_ref_id` claim is required.
 *
 * @throws {@link HostedLinkError} with a `code` saying what failed, whatever the input (a string
 * that is not a URL or a token, a non-string, a missing or malformed key); never another error.
 * @example
 * ```ts
 * const { account_ref_id } = await verifyHostedLink(request.url, process.env.BILLING_SIGNING_KEY!);
 * ```
 */
export async function verifyHostedLink(urlOrToken: string, signingKey: string): Promise<VerifiedHostedLink> {
  const key = keyOf(signingKey);
  const token = tokenOf(urlOrToken);
  const jose = await loadJoseVerify();
  try {
    const { payload } = await jose.jwtVerify(token, key, { algorithms: ['HS256'] });
    if (typeof payload.account_ref_id !== 'string' || payload.account_ref_id === '') {
      throw new HostedLinkError('missing_claim', 'hosted link token has no account_ref_id claim');
    }
    return { account_ref_id: payload.account_ref_id, claims: payload as HostedLinkClaims };
  } catch (err) {
    if (err instanceof HostedLinkError) throw err;
    throw fromJose(err, jose);
  }
}

/** The key's bytes. An empty key would accept tokens anyone can forge: refused as `invalid_token`, as a wrong key is. */
function keyOf(signingKey: unknown): Uint8Array {
  if (typeof signingKey !== 'string' || signingKey === '') {
    throw new HostedLinkError('invalid_token', 'verifyHostedLink: signingKey is required');
  }
  if (!isWellFormed(signingKey)) {
    throw new HostedLinkError('invalid_token', 'verifyHostedLink: signingKey has a lone UTF-16 surrogate');
  }
  return encoder.encode(signingKey);
}

function tokenOf(urlOrToken: unknown): string {
  if (typeof urlOrToken !== 'string' || urlOrToken === '') {
    throw new HostedLinkError('missing_token', 'verifyHostedLink: no token given');
  }
  if (!isWellFormed(urlOrToken)) {
    throw new HostedLinkError('invalid_token', 'hosted link has a lone UTF-16 surrogate');
  }
  if (!/^[a-z][a-z0-9+.-]*:/i.test(urlOrToken)) return urlOrToken;
  const token = urlOf(urlOrToken).searchParams.get('u');
  if (!token) throw new HostedLinkError('missing_token', 'hosted link has no u parameter');
  return token;
}

/**
 * Parses a link that starts with a scheme; one that does not parse carries no token to trust. No
 * cause is attached: the parser's error keeps the whole link as its `input`, and with it the `?u=`
 * token, a credential to the paywall that `util.inspect(err)` would print.
 */
function urlOf(link: string): URL {
  try {
    return new URL(link);
  } catch {
    throw new HostedLinkError('invalid_token', 'hosted link is not a valid URL');
  }
}

function fromJose(err: unknown, errors: typeof import('../platform/jose-verify.js')): HostedLinkError {
  if (err instanceof errors.JOSEAlgNotAllowed) {
    return new HostedLinkError('unsupported_algorithm', 'hosted link token is not signed with HS256', {
      cause: err,
    });
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) {
    return new HostedLinkError('invalid_signature', 'hosted link token signature does not verify', {
      cause: err,
    });
  }
  if (err instanceof errors.JWTExpired) {
    return new HostedLinkError('expired', 'hosted link token has expired', { cause: err });
  }
  return new HostedLinkError('invalid_token', 'hosted link token is malformed', { cause: err });
}
