import { describe, expect, it } from 'vitest';
import type { MockServer } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';

describe('mock server: CORS', () => {
  const cors = useMockServer({ cors: true });
  const plain = useMockServer();

  const preflight = (server: MockServer) =>
    fetch(`${server.baseUrl}usage/credits/debit/`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://127.0.0.1:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });

  it('answers preflights without a key when enabled', async () => {
    const r = await preflight(cors.server);
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const allowed = (r.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    expect(allowed).toEqual(
      expect.arrayContaining(['authorization', 'x-api-key', 'content-type', 'idempotency-key']),
    );
    expect(r.headers.get('access-control-allow-methods')).toContain('POST');
    expect(cors.server.requests.count()).toBe(0);
  });

  it('adds the headers to every response, errors and faults included', async () => {
    const ok = await fetch(`${cors.server.baseUrl}products/`, {
      headers: { 'x-api-key': cors.server.apiKey },
    });
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    expect(ok.headers.get('content-type')).toBe('application/json');
    const denied = await fetch(`${cors.server.baseUrl}products/`);
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe('*');
    cors.server.faults.add({ status: 429, headers: { 'retry-after': '2' } });
    const limited = await fetch(`${cors.server.baseUrl}products/`, {
      headers: { 'x-api-key': cors.server.apiKey },
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('access-control-allow-origin')).toBe('*');
    expect(limited.headers.get('access-control-expose-headers')).toContain('Retry-After');
  });

  it('stays off by default', async () => {
    const r = await preflight(plain.server);
    expect(r.status).toBe(401);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    const ok = await fetch(`${plain.server.baseUrl}products/`, {
      headers: { 'x-api-key': plain.server.apiKey },
    });
    expect(ok.headers.get('access-control-allow-origin')).toBeNull();
  });
});
