import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  BillingClient,
  createAccessCache,
  createCreditHolds,
  createNodeWebhookHandler,
  createUsageTracker,
  createWebhookHandler,
  InvalidRequestError,
  memoryDedupeStore,
  memoryHoldStore,
} from '../../src/index.js';
import { isPlainObject } from '../../src/internal/checks.js';
import { fileSpool } from '../../src/node/index.js';
import {
  type RedisLike,
  redisAccessStore,
  redisCooldown,
  redisDedupeStore,
  redisHoldStore,
  redisSpool,
} from '../../src/redis/index.js';
import { anything } from '../arbitraries.js';
import { clientFor, useMockServer } from '../helpers.js';

/**
 * Every constructor and factory that takes an options object refuses options that are not a plain
 * object (`undefined` means the defaults) with an `InvalidRequestError` naming the operation and
 * `options`, before it does anything: never a `TypeError`, never a silent `{}` (what `{ ...null }`
 * and `{ ...42 }` spread to).
 */

const mock = useMockServer();

/** Commands a fake Redis client was sent: every case below expects none. */
let commands: string[][] = [];
const fakeRedis: RedisLike = {
  sendCommand: (args) => {
    commands.push(args);
    return Promise.resolve(null);
  },
};
/** A spool directory no case may create. */
const spoolDir = join(tmpdir(), `billing-sdk-non-object-options-${process.pid}-never-created`);

beforeEach(() => {
  commands = [];
  // With the key and URL in the environment, options spread to `{}` would make a working client.
  vi.stubEnv('BILLING_API_KEY', mock.server.apiKey);
  vi.stubEnv('BILLING_BASE_URL', mock.server.baseUrl);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

interface Factory {
  /** The operation its errors name. */
  operation: string;
  /** Calls it with `options` as the options argument. */
  make(options: unknown): unknown;
  /** Options it accepts, so a wrapper carrying them is refused for its shape alone. */
  valid(): Record<string, unknown>;
  /** Values of other types it accepts besides a plain object (memoryDedupeStore's `max` shorthand). */
  alsoAccepts?: (value: unknown) => boolean;
  /** The field `undefined` options are refused for, when an option is required (the webhook handlers' `onEvent`). */
  requires?: string;
}

const billing = () => clientFor(mock.server);

const factories: Factory[] = [
  {
    operation: 'new BillingClient',
    make: (o) => new BillingClient(o as never),
    valid: () => ({ apiKey: mock.server.apiKey, baseUrl: mock.server.baseUrl, logLevel: 'off' }),
  },
  {
    operation: 'withOptions',
    make: (o) => billing().withOptions(o as never),
    valid: () => ({ timeout: 5_000 }),
  },
  {
    operation: 'createAccessCache',
    make: (o) => createAccessCache(billing(), o as never),
    valid: () => ({ ttlMs: 1_000 }),
  },
  {
    operation: 'createUsageTracker',
    make: (o) => createUsageTracker(billing(), o as never),
    valid: () => ({ concurrency: 2 }),
  },
  {
    operation: 'createWebhookHandler',
    make: (o) => createWebhookHandler(o as never),
    valid: () => ({ onEvent: () => {} }),
    requires: 'options.onEvent',
  },
  {
    operation: 'createNodeWebhookHandler',
    make: (o) => createNodeWebhookHandler(o as never),
    valid: () => ({ onEvent: () => {} }),
    requires: 'options.onEvent',
  },
  {
    operation: 'memoryDedupeStore',
    make: (o) => memoryDedupeStore(o as never),
    valid: () => ({ max: 5 }),
    alsoAccepts: (v) => typeof v === 'number',
  },
  {
    operation: 'redisAccessStore',
    make: (o) => redisAccessStore(fakeRedis, o as never),
    valid: () => ({ prefix: 'p:' }),
  },
  {
    operation: 'redisHoldStore',
    make: (o) => redisHoldStore(fakeRedis, o as never),
    valid: () => ({ prefix: 'p:' }),
  },
  {
    operation: 'createCreditHolds',
    make: (o) => createCreditHolds(billing(), o as never),
    valid: () => ({ ttlMs: 1_000 }),
  },
  {
    operation: 'memoryHoldStore',
    make: (o) => memoryHoldStore(o as never),
    valid: () => ({ now: Date.now }),
  },
  {
    operation: 'redisCooldown',
    make: (o) => redisCooldown(fakeRedis, o as never),
    valid: () => ({ prefix: 'p:' }),
  },
  {
    operation: 'redisDedupeStore',
    make: (o) => redisDedupeStore(fakeRedis, o as never),
    valid: () => ({ prefix: 'p:' }),
  },
  {
    operation: 'redisSpool',
    make: (o) => redisSpool(fakeRedis, o as never),
    valid: () => ({ stream: 's' }),
  },
  {
    operation: 'fileSpool',
    make: (o) => fileSpool(spoolDir, o as never),
    valid: () => ({ compactAfterBytes: 1_024 }),
  },
];

class Options {}
class Settings extends Options {
  constructor(readonly timeout = 1) {
    super();
  }
}

/** Primitives, `null`, and whatever `anything` makes that is not a plain object. */
const primitive = fc.oneof(
  fc.constant(null),
  fc.double(),
  fc.integer(),
  fc.bigInt(),
  fc.string(),
  fc.boolean(),
  fc.string().map((s) => Symbol(s)),
);
const notPlain = anything.filter((v) => v !== undefined && !isPlainObject(v));

/**
 * Object-like values that are not plain objects, carrying `fields` (options the factory would
 * accept): a spread or a field-by-field read would take them for good options.
 */
const wrapped = (fields: Record<string, unknown>) =>
  fc
    .constantFrom(
      () => [] as unknown[],
      () => new Date(0),
      () => new Map([['timeout', 1]]),
      () => new Set(),
      () => new Options(),
      () => new Settings(),
      () => Object.create({}) as object,
      () => Object.create(Object.create(null)) as object,
      () => () => {},
      () => function named() {},
      () => class {},
      () => new Number(1),
      () => new String('options'),
      () => new Boolean(false),
      () => Object(Symbol('s')) as object,
      () => Object(1n) as object,
      () => /x/,
      () => new Error('e'),
      () => Promise.resolve(),
      () => new Uint8Array(2),
      () => new Proxy(new Options(), {}),
    )
    .map((make) => Object.assign(make(), fields));

/** `typeof` says object, and every trap throws a TypeError (fast-check cannot even inspect it). */
function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** What `make` threw, or a failed expectation when it returned. */
function thrownBy(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  return expect.unreachable('expected an InvalidRequestError, nothing was thrown');
}

function expectRefused(error: unknown, operation: string, field = 'options'): void {
  expect(error).toBeInstanceOf(InvalidRequestError);
  const refusal = error as InvalidRequestError;
  expect(refusal.operation).toBe(operation);
  expect(refusal.issues.map((i) => i.field)).toEqual([field]);
  expect(refusal.message.startsWith(`${operation}: ${field} `)).toBe(true);
}

/** Nothing left the process: no HTTP request, no Redis command, no spool directory. */
function expectNothingSent(): void {
  expect(mock.server.requests.count()).toBe(0);
  expect(commands).toEqual([]);
  expect(existsSync(spoolDir)).toBe(false);
}

describe.each(factories)('$operation', (factory) => {
  it('refuses null, naming the operation and options', () => {
    const error = thrownBy(() => factory.make(null));
    expectRefused(error, factory.operation);
    expect((error as Error).message).toMatch(/options must be a plain object/);
    expectNothingSent();
  });

  it('refuses a revoked proxy with InvalidRequestError, not its TypeError', () => {
    expectRefused(
      thrownBy(() => factory.make(revokedProxy())),
      factory.operation,
    );
    expectNothingSent();
  });

  it('undefined means the defaults (or names the required option)', () => {
    if (factory.requires) {
      expectRefused(
        thrownBy(() => factory.make(undefined)),
        factory.operation,
        factory.requires,
      );
    } else {
      expect(factory.make(undefined)).toBeTruthy();
    }
    expectNothingSent();
  });

  it('accepts plain options and null-prototype options', () => {
    const made = [
      factory.make(factory.valid()),
      factory.make(Object.assign(Object.create(null), factory.valid())),
    ];
    for (const m of made) expect(m).toBeTruthy();
    expectNothingSent();
  });

  it('property: any non-object options are refused with InvalidRequestError, and nothing is sent', () => {
    const others = fc
      .oneof(primitive, notPlain, wrapped(factory.valid()))
      .filter((v) => !factory.alsoAccepts?.(v));
    fc.assert(
      fc.property(others, (options) => {
        expectRefused(
          thrownBy(() => factory.make(options)),
          factory.operation,
        );
        expectNothingSent();
      }),
    );
  });

  it('names the kind of value, never its content', () => {
    const secret = Object.assign(new Options(), { ...factory.valid(), apiKey: 'test-key-never-printed' });
    const error = thrownBy(() => factory.make(secret)) as Error;
    expectRefused(error, factory.operation);
    expect(error.message).toContain('an instance of Options');
    expect(error.message).not.toContain('test-key-never-printed');
  });
});

describe('memoryDedupeStore keeps its number shorthand', () => {
  it('a number is max', async () => {
    const store = memoryDedupeStore(1);
    expect(await store.claim('a', 't', 1_000)).toBe('claimed');
    await store.complete('a', 't');
    await store.complete('b', 't');
    // Max 1: `a` was forgotten when `b` was recorded, so it can be claimed again.
    expect(await store.claim('a', 't2', 1_000)).toBe('claimed');
  });
});

describe('a first argument that is not a client', () => {
  const needsBilling = [
    ['createAccessCache', (b: unknown) => createAccessCache(b as never)],
    ['createUsageTracker', (b: unknown) => createUsageTracker(b as never)],
    ['createCreditHolds', (b: unknown) => createCreditHolds(b as never)],
  ] as const;
  const needsRedis = [
    ['redisAccessStore', (c: unknown, o?: unknown) => redisAccessStore(c as never, o as never)],
    ['redisCooldown', (c: unknown, o?: unknown) => redisCooldown(c as never, o as never)],
    ['redisHoldStore', (c: unknown, o?: unknown) => redisHoldStore(c as never, o as never)],
    ['redisDedupeStore', (c: unknown, o?: unknown) => redisDedupeStore(c as never, o as never)],
    ['redisSpool', (c: unknown, o?: unknown) => redisSpool(c as never, o as never)],
  ] as const;

  it.each(needsBilling)('%s(null) names billing', (operation, make) => {
    expectRefused(
      thrownBy(() => make(null)),
      operation,
      'billing',
    );
    expectNothingSent();
  });

  it.each(needsRedis)('%s(null) names client', (operation, make) => {
    expectRefused(
      thrownBy(() => make(null)),
      operation,
      'client',
    );
  });

  it.each(needsRedis)('%s refuses a revoked proxy as client', (operation, make) => {
    expectRefused(
      thrownBy(() => make(revokedProxy())),
      operation,
      'client',
    );
  });

  it.each(needsRedis)('property: %s refuses any client without sendCommand', (operation, make) => {
    fc.assert(
      fc.property(fc.oneof(primitive, anything, wrapped({ send: () => {} })), (client) => {
        expectRefused(
          thrownBy(() => make(client)),
          operation,
          'client',
        );
      }),
    );
  });

  it.each(needsRedis)('%s refuses a bad client before it looks at the options', (operation, make) => {
    // Both arguments are wrong: the first is named, as the signature reads.
    const error = thrownBy(() => make({}, null));
    expectRefused(error, operation, 'client');
  });
});
