import { gzipSync } from 'node:zlib';

/** Gzips a body. Synchronous: bodies are in memory already, and a fault's is compressed only once. */
export function gzip(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(gzipSync(bytes));
}

/** Codings the platform fetch (undici) decodes and that the web `DecompressionStream` knows. */
const DECODABLE: Readonly<Record<string, CompressionFormat>> = {
  gzip: 'gzip',
  'x-gzip': 'gzip',
  deflate: 'deflate',
};

/**
 * Decodes a compressed body the way the platform fetch does (headers untouched, the body streamed
 * through the decoder), so an in-process client sees what it would see over TCP, a gzip bomb
 * included. Codings it does not know pass through as raw bytes.
 */
export function decodeContent(response: Response): Response {
  const coding = response.headers.get('content-encoding')?.trim().toLowerCase();
  const format = coding === undefined ? undefined : DECODABLE[coding];
  if (format === undefined || response.body === null) return response;
  return new Response(response.body.pipeThrough(new DecompressionStream(format)), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
