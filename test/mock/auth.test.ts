import { describe, expect, it } from 'vitest';
import { DEMO, startMockServer } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client } from './helpers.js';

describe('mock server: authentication and routing', () => {
  const mock = useMockServer();
  const api = client(mock);

  it('listens on loopback with the documented URLs and default keys', () => {
    expect(mock.server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/$/);
    expect(mock.server.appUrl).toBe(mock.server.baseUrl.replace(/\/api\/$/, ''));
    expect(mock.server.apiKey).toBe('mock-api-key-demo');
    expect(mock.server.signingKey).toBe('mock-signing-key-demo');
    expect(mock.server.apiKey).toBe(DEMO.apiKey);
  });

  it('accepts Authorization: Bearer', async () => {
    const r = await api.get('products/');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
  });

  it('accepts X-API-Key', async () => {
    const r = await api.get('products/', { authorization: '', 'x-api-key': mock.server.apiKey });
    expect(r.status).toBe(200);
  });

  it.each([
    ['no key', { authorization: '' }],
    ['wrong bearer', { authorization: 'Bearer nope' }],
    ['wrong x-api-key', { authorization: '', 'x-api-key': 'nope' }],
    ['key without Bearer scheme', { authorization: DEMO.apiKey }],
  ])('answers 401 {"detail": "Invalid API key"} with %s', async (_, headers) => {
    const r = await api.get('products/', headers);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ detail: 'Invalid API key' });
    expect(r.headers.get('content-type')).toBe('application/json');
  });

  it('checks the key before anything else, even on unknown routes', async () => {
    const r = await api.get('nope/', { authorization: '' });
    expect(r.status).toBe(401);
  });

  it('answers 404 on unknown API routes and on paths without the trailing slash', async () => {
    expect((await api.get('nope/')).status).toBe(404);
    const r = await api.get('products');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ detail: 'Not found.' });
  });

  it('answers 405 for the wrong method on a known route', async () => {
    const r = await api.post('products/', {});
    expect(r.status).toBe(405);
    expect(r.body).toEqual({ detail: 'Method "POST" not allowed.' });
    expect((await api.get('usage/credits/debit/')).status).toBe(405);
  });

  it('close() resolves even with keep-alive connections open', async () => {
    const other = await startMockServer();
    const r = await fetch(`${other.baseUrl}products/`, { headers: { 'x-api-key': other.apiKey } });
    expect(r.status).toBe(200);
    await r.text();
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(2000);
    await expect(fetch(`${other.baseUrl}products/`)).rejects.toThrow();
  });

  it('uses custom keys and port 0 by default', async () => {
    const other = await startMockServer({ apiKey: 'custom-key', signingKey: 'custom-signing' });
    try {
      expect(other.apiKey).toBe('custom-key');
      expect(other.signingKey).toBe('custom-signing');
      expect(other.baseUrl).not.toBe(mock.server.baseUrl);
      const ok = await fetch(`${other.baseUrl}products/`, { headers: { 'x-api-key': 'custom-key' } });
      expect(ok.status).toBe(200);
      const refused = await fetch(`${other.baseUrl}products/`, { headers: { 'x-api-key': DEMO.apiKey } });
      expect(refused.status).toBe(401);
    } finally {
      await other.close();
    }
  });
});
