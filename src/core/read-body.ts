/** The body was larger than the limit; reading stopped there. */
export class BodyTooLarge extends Error {}

/**
 * Reads a response body as text, stopping with {@link BodyTooLarge} as soon as it passes `limit`
 * bytes. Counted on the decoded stream, so a small gzip body that inflates past the limit is caught
 * while it inflates, not after. A declared `content-length` over the limit fails before reading.
 */
export async function readBody(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > limit) throw new BodyTooLarge();
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.byteLength;
    if (size > limit) {
      reader.cancel().catch(() => {});
      throw new BodyTooLarge();
    }
    text += decoder.decode(value, { stream: true });
  }
}
