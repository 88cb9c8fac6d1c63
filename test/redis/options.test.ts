import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/index.js';
import {
  type RedisLike,
  redisAccessStore,
  redisCooldown,
  redisDedupeStore,
  redisHoldStore,
} from '../../src/redis/index.js';

// Every option of every factory of billing-sdk/redis but redisSpool (its own tests): an unknown
// one, a wrong type or a value out of range throws one InvalidRequestError naming it, before any
// command is sent; every good value is taken. No Redis: a client that counts what it is asked.

/** A client that records every command it is sent (none should be). */
function recording() {
  const sent: string[][] = [];
  const client: RedisLike = {
    sendCommand: async (args) => {
      sent.push(args);
      return null;
    },
  };
  return { client, sent };
}

const FACTORIES = {
  redisAccessStore: (client: RedisLike, options: unknown) => redisAccessStore(client, options as never),
  redisCooldown: (client: RedisLike, options: unknown) => redisCooldown(client, options as never),
  redisDedupeStore: (client: RedisLike, options: unknown) => redisDedupeStore(client, options as never),
  redisHoldStore: (client: RedisLike, options: unknown) => redisHoldStore(client, options as never),
} as const;
type Factory = keyof typeof FACTORIES;

const TOO_LONG = 2 ** 31; // past what setTimeout keeps
/** Values every duration refuses. */
const NOT_A_DURATION = [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '500'];

/** [factory, option, values refused, values taken]. `null` is absent (the default), so never refused; `''` is refused as every check() refuses it. */
const TABLE: [Factory, string, unknown[], unknown[]][] = [
  ['redisAccessStore', 'prefix', [42, '', 'a{}b:', 'x\uD800'], ['app:', '{tenant}:', 'a{b}{}:']],
  ['redisAccessStore', 'timeoutMs', [...NOT_A_DURATION, TOO_LONG], [1, 0.5, 2_147_483_647]],
  ['redisAccessStore', 'pollIntervalMs', [...NOT_A_DURATION, TOO_LONG], [1, 25]],
  ['redisAccessStore', 'streamMaxLen', [0, 1.5, -1, '10'], [1, 10_000]],
  ['redisHoldStore', 'prefix', [42, '', 'a{}b:', 'x\uD800'], ['app:', '{tenant}:']],
  ['redisHoldStore', 'timeoutMs', [...NOT_A_DURATION, TOO_LONG], [1, 500]],
  ['redisCooldown', 'prefix', [42, '', 'a{}b:', 'x\uD800'], ['app:', '{tenant}:']],
  ['redisCooldown', 'probeLeaseMs', NOT_A_DURATION, [1, 10_000, TOO_LONG]],
  ['redisCooldown', 'pollIntervalMs', [...NOT_A_DURATION, TOO_LONG], [1, 50]],
  ['redisCooldown', 'timeoutMs', [...NOT_A_DURATION, TOO_LONG], [1, 500]],
  ['redisCooldown', 'pauseAfterErrorMs', [-1, Number.NaN, '1000'], [0, 1_000]],
  ['redisCooldown', 'onError', ['log', 42, {}], [() => {}]],
  ['redisDedupeStore', 'prefix', [42, '', 'a{}b:', 'x\uD800'], ['hooks:', '{hooks}:']],
  ['redisDedupeStore', 'doneTtlMs', NOT_A_DURATION, [1, 7 * 24 * 60 * 60 * 1000, 90 * 24 * 60 * 60 * 1000]],
  ['redisDedupeStore', 'timeoutMs', [...NOT_A_DURATION, TOO_LONG], [1, 2_000]],
  ['redisDedupeStore', 'waitReplicas', [-1, 1.5, 1_001, '1'], [0, 1, 1_000]],
  ['redisDedupeStore', 'waitTimeoutMs', [0, 1.5, TOO_LONG, '1000'], [1, 1_000]],
];

/** The fields an InvalidRequestError names, or what else was thrown. */
function refusal(make: () => unknown): string[] | string {
  try {
    make();
    return 'accepted';
  } catch (error) {
    return error instanceof InvalidRequestError ? error.issues.map((i) => i.field).sort() : String(error);
  }
}

describe('billing-sdk/redis factories: every option checked before any command', () => {
  it.each(TABLE)('%s refuses a bad %s, naming it', (factory, option, refused) => {
    const { client, sent } = recording();
    for (const value of refused) {
      expect(
        refusal(() => FACTORIES[factory](client, { [option]: value })),
        String(value),
      ).toEqual([`options.${option}`]);
    }
    expect(sent).toEqual([]);
  });

  it.each(TABLE)('%s takes a good %s', (factory, option, _, taken) => {
    const { client } = recording();
    for (const value of [...taken, undefined, null]) {
      expect(
        refusal(() => FACTORIES[factory](client, { [option]: value })),
        String(value),
      ).toBe('accepted');
    }
  });

  it.each(Object.keys(FACTORIES) as Factory[])(
    '%s refuses an unknown option, and options that are no plain object, sending nothing',
    (factory) => {
      const { client, sent } = recording();
      expect(refusal(() => FACTORIES[factory](client, { timeout: 500 }))).toEqual(['options.timeout']);
      for (const options of [null, 'fast', [], new Map()]) {
        expect(
          refusal(() => FACTORIES[factory](client, options)),
          String(options),
        ).toEqual(['options']);
      }
      // Several bad ones: one error naming each.
      expect(refusal(() => FACTORIES[factory](client, { prefix: 1, nope: true }))).toEqual([
        'options.nope',
        'options.prefix',
      ]);
      expect(sent).toEqual([]);
    },
  );
});
