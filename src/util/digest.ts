/**
 * The SHA-256 of `parts` (joined unambiguously: as a JSON array), base64url without padding: 43
 * characters. WebCrypto only, so the browser and worker builds have it too; it is asynchronous
 * there, hence here.
 */
export async function sha256(parts: readonly string[]): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(parts));
  const hash = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  let binary = '';
  for (const b of hash) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
