/**
 * Whether a string can be encoded as UTF-8, i.e. holds no lone UTF-16 surrogate (half of a pair
 * without its other half). URL and body encoders and `TextEncoder` would silently turn one into
 * U+FFFD, so the server would see another value than the caller gave, and two different keys
 * could sign alike: every check of caller input refuses such strings.
 *
 * ES2024's own `String.prototype.isWellFormed` where the runtime has it (Node 20, current
 * browsers): it allocates nothing, and a gate checks the account of every request. Elsewhere
 * {@link isWellFormedByEncoding}. Its own module: the signing-only bundle needs it without the
 * parameter rules.
 */
export const isWellFormed: (text: string) => boolean = /* @__PURE__ */ (() => {
  const native = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;
  return native ? (text: string) => native.call(text) : isWellFormedByEncoding;
})();

/**
 * {@link isWellFormed} for runtimes without ES2024's: `encodeURIComponent` throws a `URIError` for
 * exactly these strings (ECMAScript: an unpaired surrogate), and costs fewer bytes in a bundle than
 * the equivalent regular expression
 * `/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/`.
 */
export function isWellFormedByEncoding(text: string): boolean {
  try {
    encodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}
