import { gunzipSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createMockApp } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client } from './helpers.js';
import { rawRequest } from './raw-http.js';

const MB = 1024 * 1024;

// The mock's gzipSync, counted: what makes a fault's body cheap to repeat is that it is compressed
// once, which a count shows on any machine (a timing would depend on its load).
const zlib = vi.hoisted(() => ({ gzipped: [] as number[] }));
vi.mock('node:zlib', async (actual) => {
  const real = await actual<typeof import('node:zlib')>();
  return {
    ...real,
    gzipSync: (input: Uint8Array, options?: import('node:zlib').ZlibOptions) => {
      zlib.gzipped.push(input.length);
      return real.gzipSync(input, options);
    },
  };
});

/** Reads a body to the end, counting bytes without keeping them. */
async function countBytes(body: ReadableStream<Uint8Array> | null): Promise<number> {
  let total = 0;
  const reader = body?.getReader();
  if (!reader) return total;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return total;
    total += value.length;
  }
}

describe('mock server: compressed and large bodies', () => {
  const mock = useMockServer();
  const api = client(mock);
  const auth = () => ({ authorization: `Bearer ${mock.server.apiKey}` });
  let bomb: Buffer;

  beforeAll(() => {
    // 64 MB of spaces: about 64 KB on the wire. Built once for every test that needs it.
    bomb = gzipSync(Buffer.alloc(64 * MB, 0x20));
  });

  it('sends bodyBytes byte for byte: a gzip bomb with its own content-encoding', async () => {
    expect(bomb.length).toBeLessThan(200 * 1024);
    mock.server.faults.add({
      status: 200,
      bodyBytes: bomb,
      headers: { 'content-encoding': 'gzip' },
      times: 2,
    });
    const raw = await rawRequest(`${mock.server.baseUrl}products/`, { headers: auth() });
    expect(raw.kind).toBe('answer');
    if (raw.kind !== 'answer') return;
    expect(raw.status).toBe(200);
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(raw.headers['content-type']).toBe('application/json');
    expect(raw.headers['content-length']).toBe(String(bomb.length));
    expect(raw.body.equals(bomb)).toBe(true);
    // What a client that trusts content-encoding ends up holding.
    const response = await fetch(`${mock.server.baseUrl}products/`, { headers: auth() });
    expect(response.headers.get('content-length')).toBe(String(bomb.length));
    expect(await countBytes(response.body)).toBe(64 * MB);
  });

  it("encoding: 'gzip' compresses the handler's JSON and sends its compressed length", async () => {
    const plain = await api.get('products/');
    mock.server.faults.add({ path: '/api/products/', encoding: 'gzip', times: 2 });
    const raw = await rawRequest(`${mock.server.baseUrl}products/`, { headers: auth() });
    expect(raw.kind).toBe('answer');
    if (raw.kind !== 'answer') return;
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(raw.headers['content-length']).toBe(String(raw.body.length));
    expect(gunzipSync(raw.body).toString()).toBe(plain.text);
    // fetch decodes it transparently.
    const decoded = await api.get('products/');
    expect(decoded.headers.get('content-encoding')).toBe('gzip');
    expect(decoded.body).toEqual(plain.body);
  });

  it("encoding: 'gzip' compresses a status fault's body once, the same bytes every time", async () => {
    const body = JSON.stringify({ detail: 'x'.repeat(10_000) });
    mock.server.faults.add({ status: 503, body, encoding: 'gzip', times: Number.POSITIVE_INFINITY });
    const first = await rawRequest(`${mock.server.baseUrl}products/`, { headers: auth() });
    const second = await rawRequest(`${mock.server.baseUrl}tiers/`, { headers: auth() });
    if (first.kind !== 'answer' || second.kind !== 'answer') throw new Error('expected two answers');
    expect([first.status, second.status]).toEqual([503, 503]);
    expect(first.body.length).toBeLessThan(body.length / 10);
    expect(first.body.equals(second.body)).toBe(true);
    expect(gunzipSync(first.body).toString()).toBe(body);
  });

  it('gzips a 64 MB body given as a string once, however many times the fault answers', async () => {
    mock.server.faults.add({
      status: 200,
      body: ' '.repeat(64 * MB),
      encoding: 'gzip',
      times: Number.POSITIVE_INFINITY,
    });
    zlib.gzipped.length = 0;
    for (let i = 0; i < 3; i++) {
      const raw = await rawRequest(`${mock.server.baseUrl}products/`, { headers: auth() });
      expect(raw.kind === 'answer' && gunzipSync(raw.body).length === 64 * MB).toBe(true);
    }
    expect(zlib.gzipped.filter((length) => length === 64 * MB)).toHaveLength(1);
  });

  it('serves a 50 MB string body in full with its length', async () => {
    const size = 50 * MB;
    mock.server.faults.add({
      status: 200,
      body: 'a'.repeat(size),
      headers: { 'content-type': 'text/plain' },
    });
    const response = await fetch(`${mock.server.baseUrl}products/`, { headers: auth() });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(size));
    expect(response.headers.get('x-request-id')).toBe(mock.server.requests.last()?.requestId);
    expect(await countBytes(response.body)).toBe(size);
  });

  it('a stalled gzip answer sends the first half of the compressed bytes', async () => {
    mock.server.faults.add({
      status: 200,
      bodyBytes: bomb,
      headers: { 'content-encoding': 'gzip' },
      stall: 'body',
    });
    const raw = await rawRequest(`${mock.server.baseUrl}products/`, { headers: auth(), timeoutMs: 400 });
    expect(raw.kind).toBe('timeout');
    if (raw.kind !== 'timeout') return;
    expect(raw.headers?.['content-encoding']).toBe('gzip');
    expect(raw.headers?.['content-length']).toBeUndefined();
    expect(raw.body.equals(bomb.subarray(0, Math.floor(bomb.length / 2)))).toBe(true);
  });

  it('rejects body options that could never apply', () => {
    const faults = mock.server.faults;
    expect(() => faults.add({ status: 200, body: 'a', bodyBytes: new Uint8Array(1) })).toThrow(RangeError);
    expect(() => faults.add({ bodyBytes: new Uint8Array(1) })).toThrow(RangeError);
    expect(() => faults.add({ body: 'no status' })).toThrow(RangeError);
    expect(() => faults.add({ encoding: 'br' as 'gzip' })).toThrow(RangeError);
    expect(faults.size).toBe(0);
  });
});

describe('compressed bodies in process', () => {
  it('createMockApp().fetch decodes gzip as the platform fetch does, headers kept', async () => {
    const app = createMockApp();
    const auth = { authorization: `Bearer ${app.apiKey}` };
    const plain = await (await app.fetch('http://127.0.0.1/api/products/', { headers: auth })).json();
    app.faults.add({ encoding: 'gzip' });
    const r = await app.fetch('http://127.0.0.1/api/products/', { headers: auth });
    expect(r.headers.get('content-encoding')).toBe('gzip');
    expect(await r.json()).toEqual(plain);
  });

  it('expands a gzip bomb in process too', async () => {
    const app = createMockApp();
    app.faults.add({
      status: 200,
      bodyBytes: gzipSync(Buffer.alloc(8 * MB, 0x20)),
      headers: { 'content-encoding': 'gzip' },
    });
    const r = await app.fetch('http://127.0.0.1/api/products/', { headers: { 'x-api-key': app.apiKey } });
    expect(await countBytes(r.body)).toBe(8 * MB);
  });
});
