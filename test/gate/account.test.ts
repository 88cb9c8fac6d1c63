import { describe, expect, it } from 'vitest';
import { createAccessCache, createGate, InvalidRequestError } from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();

describe('createGate: the account the app names', () => {
  it('a value that cannot be an account (a path move, a lone surrogate, not a string) fails the request, typed, before any lookup', async () => {
    const billing = clientFor(mock.server);
    const access = createAccessCache(billing);
    try {
      for (const account of ['..', 'a\uD800', 42, { id: 'acct_active' }]) {
        const gate = createGate({ billing, access, account: () => account as string });
        const error = await caught(() =>
          gate.check(new Request('http://app.test/'), { subscription: 'pro-plan' }),
        );
        expect(error, String(account)).toBeInstanceOf(InvalidRequestError);
        expect((error as InvalidRequestError).issues[0]?.field).toBe('account');
      }
      expect(mock.server.requests.count()).toBe(0);
    } finally {
      await access.close();
    }
  });
});

describe('createGate: the account, checked on every request', () => {
  it('a bad account is refused after good ones were answered from memory, and a good one is answered from memory again', async () => {
    const billing = clientFor(mock.server);
    const access = createAccessCache(billing);
    try {
      let next: unknown = DEMO.accounts.active;
      const gate = createGate({ billing, access, account: () => next as string });
      const need = { subscription: 'pro-plan' };
      for (let i = 0; i < 3; i++) {
        expect(await gate.check(new Request('http://app.test/'), need)).toMatchObject({ allowed: true });
      }
      for (const account of ['..', 'a\uD800', `${DEMO.accounts.active}\uDC00`]) {
        next = account;
        const error = await caught(() => gate.check(new Request('http://app.test/'), need));
        expect(error, account).toBeInstanceOf(InvalidRequestError);
      }
      next = DEMO.accounts.active;
      expect(await gate.check(new Request('http://app.test/'), need)).toMatchObject({ source: 'cache' });
    } finally {
      await access.close();
    }
  });
});

describe('createGate: options', () => {
  it('names a bad paywall field under options.paywall, before anything is sent', async () => {
    const billing = clientFor(mock.server);
    const access = createAccessCache(billing);
    try {
      const error = await caught(() =>
        createGate({ billing, access, account: () => undefined, paywall: { signingKey: '', linkTtlMs: 0 } }),
      );
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual([
        'options.paywall.signingKey',
        'options.paywall.linkTtlMs',
      ]);
      expect(mock.server.requests.count()).toBe(0);
    } finally {
      await access.close();
    }
  });
});
