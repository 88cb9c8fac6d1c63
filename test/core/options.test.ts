import { afterEach, describe, expect, it, vi } from 'vitest';
import { BillingClient, InvalidRequestError } from '../../src/index.js';
import { caught } from '../helpers.js';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
});

describe('client options', () => {
  it('names the option and the env variable when the API key is missing', async () => {
    vi.stubEnv('BILLING_API_KEY', '');
    const err = await caught(() => new BillingClient({ baseUrl: 'https://billing.example.com/api/' }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).issues.map((i) => i.field)).toEqual(['apiKey']);
    expect(err.message).toContain('BILLING_API_KEY');
  });

  it('names the option and the env variable when the base URL is missing', async () => {
    vi.stubEnv('BILLING_BASE_URL', '');
    const err = await caught(() => new BillingClient({ apiKey: 'k' }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).issues.map((i) => i.field)).toEqual(['baseUrl']);
    expect(err.message).toContain('BILLING_BASE_URL');
  });

  it('reads the key and base URL from the environment', () => {
    vi.stubEnv('BILLING_API_KEY', 'env-key');
    vi.stubEnv('BILLING_BASE_URL', 'https://billing.example.com/api');
    expect(() => new BillingClient()).not.toThrow();
  });

  it('refuses http: to a non-loopback host unless allowInsecureHttp', async () => {
    const err = await caught(
      () => new BillingClient({ apiKey: 'k', baseUrl: 'http://billing.example.com/api/' }),
    );
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).issues.map((i) => i.field)).toEqual(['baseUrl']);
    expect(err.message).toMatch(/http: to billing\.example\.com/);
    expect(err.message).toContain('allowInsecureHttp');
    expect(
      () =>
        new BillingClient({
          apiKey: 'k',
          baseUrl: 'http://billing.example.com/api/',
          allowInsecureHttp: true,
        }),
    ).not.toThrow();
  });

  it.each([
    'http://127.0.0.1:8080/api/',
    'http://localhost/api/',
    'http://[::1]:9/api/',
    'http://app.localhost/api/',
  ])('accepts http: to loopback %s', (baseUrl) => {
    expect(() => new BillingClient({ apiKey: 'k', baseUrl })).not.toThrow();
  });

  it.each([
    ['not a url', /absolute URL/],
    ['ftp://billing.example.com/api/', /https:/],
    ['https://user:pw@billing.example.com/api/', /credentials/],
  ])('refuses the base URL %s', async (baseUrl, message) => {
    const err = await caught(() => new BillingClient({ apiKey: 'k', baseUrl }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).issues.map((i) => i.field)).toEqual(['baseUrl']);
    expect(err.message).toMatch(message);
  });

  it.each(['timeout', 'maxRetries', 'maxRetryDelay'] as const)('refuses a negative %s', async (name) => {
    const err = await caught(
      () => new BillingClient({ apiKey: 'k', baseUrl: 'https://b.example/api/', [name]: -1 }),
    );
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).issues.map((i) => i.field)).toEqual([name]);
  });

  it('refuses to hold an API key in a browser window without dangerouslyAllowBrowser', async () => {
    vi.stubGlobal('window', {});
    vi.stubGlobal('document', {});
    const err = await caught(() => new BillingClient({ apiKey: 'k', baseUrl: 'https://b.example/api/' }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).issues.map((i) => i.field)).toEqual(['dangerouslyAllowBrowser']);
    expect(
      () =>
        new BillingClient({ apiKey: 'k', baseUrl: 'https://b.example/api/', dangerouslyAllowBrowser: true }),
    ).not.toThrow();
  });

  it.each([
    ['cooldown', { cooldown: {} }],
    ['dispatcher', { fetch: globalThis.fetch, dispatcher: { request: () => {} } }],
    ['apiKey', { apiKey: 'with space' }],
    ['logger', { logger: {} }],
    ['nope', { nope: 1 }],
  ] as const)('refuses a bad %s with InvalidRequestError naming it', async (field, options) => {
    const err = await caught(
      () => new BillingClient({ apiKey: 'k', baseUrl: 'https://b.example/api/', ...options } as never),
    );
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).operation).toBe('new BillingClient');
    expect((err as InvalidRequestError).issues.map((i) => i.field)).toEqual([field]);
  });
});
