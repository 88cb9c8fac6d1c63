import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  createAccessCache,
  createNodeWebhookHandler,
  createWebhookHandler,
  type DedupeStore,
  InvalidRequestError,
  memoryDedupeStore,
} from '../../src/index.js';
import { MAX_DURATION_MS } from '../../src/internal/duration.js';
import { postgresDedupeStore } from '../../src/postgres/index.js';
import { type RedisLike, redisAccessStore, redisCooldown, redisDedupeStore } from '../../src/redis/index.js';
import { MAX_TIMER_MS } from '../../src/util/timers.js';
import { caught, clientFor, useMockServer } from '../helpers.js';
import { event } from './event.js';

// Issue 47 §3: every `…Ms` option of every factory of the access cache, the webhooks and their
// stores is bounded, checked when the object is made. The options are read from each factory's
// options interface in the source, so a new `…Ms` option is walked without touching this test.

const mock = useMockServer();
const redis: RedisLike = { sendCommand: () => new Promise(() => {}) };
/** A node-postgres Client's shape; never asked anything here (the options fail, or nothing is sent). */
const pg = {
  query: () => new Promise(() => {}),
  connect: async () => {},
  on: () => {},
  connectionParameters: {},
};

/** Whether `make` throws. */
const refuses = (make: () => unknown): boolean => {
  try {
    make();
    return false;
  } catch {
    return true;
  }
};

/** The `…Ms` options of an interface of `file`. */
function msOptions(file: string, name: string): string[] {
  const source = readFileSync(new URL(`../../src/${file}`, import.meta.url), 'utf8');
  const start = source.indexOf(`export interface ${name} {`);
  if (start < 0) throw new Error(`no interface ${name} in ${file}`);
  const body = source.slice(start, source.indexOf('\n}', start));
  return [...body.matchAll(/^ {2}(\w+Ms)\?:/gm)].map((m) => m[1] as string);
}

const factories: { name: string; file: string; options: string; make: (o: object) => unknown }[] = [
  {
    name: 'createAccessCache',
    file: 'access/options.ts',
    options: 'AccessCacheOptions',
    make: (o) => createAccessCache(clientFor(mock.server), o),
  },
  {
    name: 'createWebhookHandler',
    file: 'webhooks/handle.ts',
    options: 'WebhookHandlerOptions',
    make: (o) => createWebhookHandler({ onEvent: () => {}, ...o }),
  },
  {
    name: 'createNodeWebhookHandler',
    file: 'webhooks/handle.ts',
    options: 'WebhookHandlerOptions',
    make: (o) => createNodeWebhookHandler({ onEvent: () => {}, ...o }),
  },
  {
    name: 'redisAccessStore',
    file: 'redis/access-store.ts',
    options: 'RedisAccessStoreOptions',
    make: (o) => redisAccessStore(redis, o),
  },
  {
    name: 'redisCooldown',
    file: 'redis/cooldown.ts',
    options: 'RedisCooldownOptions',
    make: (o) => redisCooldown(redis, o),
  },
  {
    name: 'redisDedupeStore',
    file: 'redis/dedupe-store.ts',
    options: 'RedisDedupeStoreOptions',
    make: (o) => redisDedupeStore(redis, o),
  },
  {
    name: 'postgresDedupeStore',
    file: 'postgres/dedupe-store.ts',
    options: 'PostgresDedupeStoreOptions',
    make: (o) => postgresDedupeStore(pg, o),
  },
];

describe('every …Ms option is bounded when the object is made', () => {
  it('finds the options it walks', () => {
    const walked = factories.flatMap((f) => msOptions(f.file, f.options).map((o) => `${f.name}.${o}`));
    expect(walked).toEqual(
      expect.arrayContaining([
        'createAccessCache.ttlMs',
        'createAccessCache.denyTtlMs',
        'createAccessCache.staleMs',
        'createWebhookHandler.claimTtlMs',
        'redisCooldown.probeLeaseMs',
        'redisCooldown.pauseAfterErrorMs',
        'redisDedupeStore.doneTtlMs',
        'postgresDedupeStore.doneTtlMs',
      ]),
    );
  });

  for (const factory of factories) {
    for (const option of msOptions(factory.file, factory.options)) {
      it(`${factory.name}: ${option}`, async () => {
        // What no sleep or timer of the SDK honours: past a year, past what one timer keeps twice
        // over, unending, not a number.
        for (const value of [MAX_DURATION_MS + 1, 1e15, Number.POSITIVE_INFINITY, Number.NaN, -1]) {
          const error = await caught(() => factory.make({ [option]: value }));
          expect(error, `${option}: ${value}`).toBeInstanceOf(InvalidRequestError);
          expect((error as InvalidRequestError).issues.map((i) => i.field)).toContain(`options.${option}`);
        }
        // The largest value each accepts is one the SDK's waits honour (a timer's own option: one
        // setTimeout; any other: the one sleep, in chunks).
        const both = (ms: number) => ({
          [option]: ms,
          ...(option === 'ttlMs' || option === 'denyTtlMs' ? { staleMs: ms } : {}),
        });
        const largest = refuses(() => factory.make(both(MAX_DURATION_MS))) ? MAX_TIMER_MS : MAX_DURATION_MS;
        const made = factory.make(both(largest));
        expect(made).toBeDefined();
        await (made as { close?: () => Promise<void> }).close?.();
      });
    }
  }
});

describe('a claim TTL past what one timer keeps', () => {
  it('claimTtlMs 1e10 (115 days): onEvent runs under it with no renewal storm, no overflow warning', async () => {
    const store = memoryDedupeStore();
    let renewals = 0;
    const dedupe: DedupeStore = {
      ...store,
      renew: (...a) => {
        renewals++;
        return store.renew(...a);
      },
    };
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const handler = createWebhookHandler({
        dedupe,
        claimTtlMs: 1e10,
        onEvent: () => new Promise((resolve) => setTimeout(resolve, 200)),
      });
      const response = await handler(
        new Request('http://x/', { method: 'POST', body: JSON.stringify(event()) }),
      );
      expect(response.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(renewals).toBe(0);
      expect(warnings).not.toContain('TimeoutOverflowWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });
});
