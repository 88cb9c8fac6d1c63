/**
 * Whether a string can be encoded as UTF-8, i.e. holds no lone UTF-16 surrogate (half of a pair
 * without its other half). URL and body encoders and `TextEncoder` would silently turn one into
 * U+FFFD, so the server would see another value than the caller gave, and two different keys
 * could sign alike: every check of caller input refuses such strings.
 *
 * `encodeURIComponent` throws a `URIError` for exactly these strings (ECMAScript: an unpaired
 * surrogate), and costs fewer bytes in a bundle than the equivalent regular expression
 * `/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/`. Its own module: the
 * signing-only bundle needs it without the parameter rules.
 */
export function isWellFormed(text: string): boolean {
  try {
    encodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}
