import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createAccessCache,
  createGate,
  type DedupeStore,
  type GateDecision,
  type GateRequest,
  InvalidRequestError,
  memoryDedupeStore,
} from '../../src/index.js';
import { clientFor, useMockServer } from '../helpers.js';
import {
  A,
  AI,
  ask,
  credits,
  DEBIT_PATH,
  EMPTY,
  expectProblem,
  FRAMEWORKS,
  header,
  PRO,
  servers,
} from './helpers.js';
import { idempotencyCases } from './idempotency-cases.js';

const mock = useMockServer();
const balance = (account: string = A) => mock.server.store.balance(account, AI, 'credits');
const debits = () => mock.server.requests.count({ method: 'POST', path: DEBIT_PATH });

idempotencyCases('in memory', mock, async () => {
  const store = memoryDedupeStore();
  return [store, store];
});

/** A store that counts what the gate asks of it. */
function counted(store: DedupeStore = memoryDedupeStore()) {
  const calls: string[] = [];
  const wrap =
    <K extends 'claim' | 'renew' | 'complete' | 'release'>(name: K) =>
    (...args: Parameters<DedupeStore[K]>) => {
      calls.push(name);
      return (store[name] as (...a: unknown[]) => unknown)(...args);
    };
  const spy = {
    claim: wrap('claim'),
    renew: wrap('renew'),
    complete: wrap('complete'),
    release: wrap('release'),
  } as DedupeStore;
  return { store: spy, calls };
}

describe.each(FRAMEWORKS)('Idempotency-Key through $name: costs and fingerprints', (framework) => {
  const start = servers(framework, mock);
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('a request without the header costs no store round trip and no digest', async () => {
    const { store, calls } = counted();
    const digest = vi.spyOn(globalThis.crypto.subtle, 'digest');
    const s = await start({ need: [PRO, credits(5)] }, { idempotency: { store } });
    for (let i = 0; i < 3; i++) expect((await ask(s, { account: A })).status).toBe(200);
    expect(calls).toEqual([]);
    expect(digest).not.toHaveBeenCalled();
    expect(balance()).toBe(985);
    // With one: two claims, two done marks.
    expect((await ask(s, { account: A, idempotencyKey: 'k1' })).status).toBe(200);
    await vi.waitFor(() => expect(calls).toEqual(['claim', 'claim', 'complete', 'complete']));
  });

  it("the same key with another fingerprint (the app's, of the body) is refused 422", async () => {
    const s = await start(
      { need: credits(5) },
      { idempotency: { fingerprint: (request) => header(request, 'x-body') } },
    );
    const first = await ask(s, { account: A, idempotencyKey: 'k', headers: { 'x-body': 'one' } });
    expect(first.status).toBe(200);
    const other = await ask(s, { account: A, idempotencyKey: 'k', headers: { 'x-body': 'two' } });
    expectProblem(other, 422, 'idempotency_key_mismatch');
    const same = await ask(s, { account: A, idempotencyKey: 'k', headers: { 'x-body': 'one' } });
    expectProblem(same, 422, 'idempotency_key_used');
    expect(s.handled).toBe(1);
    expect(balance()).toBe(995);
  });

  it('a route without credits ignores the header (nothing is charged, nothing claimed)', async () => {
    const { store, calls } = counted();
    const s = await start({ need: PRO }, { idempotency: { store } });
    for (let i = 0; i < 2; i++) expect((await ask(s, { account: A, idempotencyKey: 'k' })).status).toBe(200);
    expect(calls).toEqual([]);
    expect(s.handled).toBe(2);
  });

  it('a store that fails answers 503 and runs no handler', async () => {
    const down: DedupeStore = {
      ...memoryDedupeStore(),
      claim: () => Promise.reject(new Error('down')),
    };
    const s = await start({ need: credits(5) }, { idempotency: { store: down } });
    expectProblem(await ask(s, { account: A, idempotencyKey: 'k' }), 503, 'unavailable');
    expect(s.handled).toBe(0);
    expect(debits()).toBe(0);
  });
});

describe('gate.check: the caller marks the claim', () => {
  const gateOf = (store: DedupeStore = memoryDedupeStore()) => {
    const billing = clientFor(mock.server, { maxRetries: 0 });
    return createGate({
      billing,
      access: createAccessCache(billing),
      account: (request: Request) => request.headers.get('x-account') ?? undefined,
      idempotency: { store },
    });
  };
  const request = (key: string, account: string = A) =>
    new Request('http://app.test/jobs', {
      method: 'POST',
      headers: { 'x-account': account, 'idempotency-key': key },
    });
  const allowed = (d: GateDecision) => {
    if (!d.allowed) throw new Error(`refused ${d.status}`);
    return d;
  };

  it('unmarked, the key is in flight (409); done() uses it up (422); failed() frees it, charged once', async () => {
    const gate = gateOf();
    const first = allowed(await gate.check(request('job-1'), credits(5)));
    expect(first.idempotency?.key).toBe('job-1');
    const busy = await gate.check(request('job-1'), credits(5));
    expect(busy).toMatchObject({ allowed: false, status: 409, reason: 'idempotency_key_in_flight' });
    await first.idempotency?.failed();
    const retry = allowed(await gate.check(request('job-1'), credits(5)));
    expect(retry.debit?.event_key).toBe(first.debit?.event_key);
    await retry.idempotency?.done();
    const reuse = await gate.check(request('job-1'), credits(5));
    expect(reuse).toMatchObject({ allowed: false, status: 422, reason: 'idempotency_key_used' });
    expect(balance()).toBe(995);
  });

  it('a claim never marked lapses after claimTtlMs (never renewed under check)', async () => {
    let now = 0;
    const store = memoryDedupeStore({ now: () => now });
    const billing = clientFor(mock.server, { maxRetries: 0 });
    const gate = createGate({
      billing,
      access: createAccessCache(billing),
      account: (r: Request) => r.headers.get('x-account') ?? undefined,
      idempotency: { store, claimTtlMs: 1_000 },
    });
    allowed(await gate.check(request('job-2'), credits(5)));
    now = 1_001;
    allowed(await gate.check(request('job-2'), credits(5)));
    expect(balance()).toBe(995);
  });

  it('a denied check frees its key: 402, then the same key after a top-up is charged', async () => {
    const gate = gateOf();
    const refused = await gate.check(request('job-3', EMPTY), credits(5));
    expect(refused).toMatchObject({ allowed: false, status: 402 });
    mock.server.store.setBalance(EMPTY, AI, 'credits', 10);
    const retry = allowed(await gate.check(request('job-3', EMPTY), credits(5)));
    expect(retry.debit).toMatchObject({ approved: true, debited: 5 });
  });

  it('the idempotency option is checked when the gate is made', () => {
    const billing = clientFor(mock.server);
    const make = (idempotency: unknown) => () =>
      createGate({
        billing,
        access: createAccessCache(billing),
        account: () => A,
        idempotency: idempotency as never,
      });
    expect(make({ rememberMs: 0 })).toThrow(InvalidRequestError);
    expect(make({ store: {} })).toThrow(/options\.idempotency\.store/);
    expect(make({ fingerprint: 'body' })).toThrow(/options\.idempotency\.fingerprint/);
    expect(make({ ttl: 1 })).toThrow(/options\.idempotency\.ttl/);
  });

  it('property: a key is refused 400 exactly when over 255 characters or not printable ASCII, never sent', async () => {
    const billing = clientFor(mock.server, { maxRetries: 0 });
    const gate = createGate<GateRequest>({
      billing,
      access: createAccessCache(billing),
      account: () => A,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ minLength: 1, maxLength: 300 }),
          fc.string({ minLength: 250, maxLength: 260, unit: fc.constantFrom('a', '-', ' ') }),
          fc.string({ minLength: 1, maxLength: 8, unit: 'binary' }),
        ),
        async (key) => {
          const before = debits();
          const d = await gate.check({ method: 'POST', headers: { 'idempotency-key': key } }, credits(1));
          const valid = key.length <= 255 && /^[\x20-\x7e]+$/.test(key);
          if (valid) {
            expect(d.allowed).toBe(true);
            if (d.allowed) await d.idempotency?.failed();
          } else {
            expect(d).toMatchObject({ allowed: false, status: 400, reason: 'idempotency_key_invalid' });
            expect(debits()).toBe(before);
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it('memoryDedupeStore forgets a done id after doneTtlMs, and refuses a doneTtlMs that is no duration', () => {
    let now = 0;
    const store = memoryDedupeStore({ now: () => now, doneTtlMs: 1_000 });
    expect(store.claim('id', 't', 100)).toBe('claimed');
    store.complete('id', 't');
    now = 999;
    expect(store.claim('id', 'u', 100)).toBe('done');
    now = 1_000;
    expect(store.claim('id', 'u', 100)).toBe('claimed');
    for (const doneTtlMs of [0, -1, Number.NaN, '1'] as unknown as number[]) {
      expect(() => memoryDedupeStore({ doneTtlMs })).toThrow(InvalidRequestError);
    }
  });

  it('property: a key reaches no other account, route or key; the event_key is never the raw header', async () => {
    const gate = gateOf();
    const seen = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 255, unit: fc.constantFrom('a', 'b', ' ', '~', ':', '0') }),
        fc.constantFrom(A, 'acct_other'),
        fc.constantFrom('/a', '/b'),
        async (key, account, path) => {
          if (key.trim() !== key) return; // a header value's edges are trimmed by Fetch
          mock.server.store.setBalance(account, AI, 'credits', 1_000);
          await mock.server.lifecycle.subscribe({ account_ref_id: account }).catch(() => {});
          const r = new Request(`http://app.test${path}`, {
            method: 'POST',
            headers: { 'x-account': account, 'idempotency-key': key },
          });
          const d = await gate.check(r, credits(1));
          if (!d.allowed) {
            expect(d.status).toBe(422); // this exact (account, key) was used on the other path
            return;
          }
          const eventKey = d.debit?.event_key as string;
          await d.idempotency?.failed();
          expect(eventKey).not.toBe(key);
          expect(eventKey).toMatch(/^gate_[\w-]{43}$/);
          const who = `${account}\n${path}\n${key}`;
          const before = seen.get(eventKey);
          if (before !== undefined) expect(before).toBe(who);
          seen.set(eventKey, who);
        },
      ),
      { numRuns: 60 },
    );
  });
});
