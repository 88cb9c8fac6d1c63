import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/index.js';
import { storeFailure, unexpectedReply } from '../../src/redis/store-errors.js';

// How a Redis client's error becomes the StoreError users meet: a refusal for good (an error reply
// such as WRONGTYPE or an unknown command) is 'unexpected_reply'; a lost connection, a timeout or a
// server that cannot serve right now (loading, busy, failing over) is 'unavailable'.
describe('storeFailure', () => {
  /** An error as node-redis (ErrorReply) and ioredis (ReplyError) pass a Redis error reply on. */
  const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });

  it.each([
    'WRONGTYPE Operation against a key holding the wrong kind of value script: 1f2e, on @user_script:1.',
    "ERR unknown command 'XAUTOCLAIM', with args beginning with: ",
    'ERR Error running script (call to f_1f2e): @user_script:1: WRONGTYPE Operation against a key',
    'NOSCRIPT No matching script.',
    "CROSSSLOT Keys in request don't hash to the same slot",
  ])('an error reply that refuses the step for good is unexpected_reply: %s', (message) => {
    const error = storeFailure('redisDedupeStore.claim', reply(message));
    expect(error).toBeInstanceOf(StoreError);
    expect(error.code).toBe('unexpected_reply');
    expect(error.message).toBe(`redisDedupeStore.claim: Redis answered an error: ${message}`);
    expect((error.cause as Error).message).toBe(message);
  });

  it.each([
    'LOADING Redis is loading the dataset in memory',
    'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.',
    "READONLY You can't write against a read only replica.",
    'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.',
    'CLUSTERDOWN The cluster is down',
    'TRYAGAIN Multiple keys request during rehashing of slot',
    "OOM command not allowed when used memory > 'maxmemory'.",
  ])('an error reply of a server that cannot serve right now is unavailable: %s', (message) => {
    expect(storeFailure('redisCooldown.acquire', reply(message)).code).toBe('unavailable');
  });

  it('a socket error, a closed client, a timeout or a thrown non-error is unavailable', () => {
    const socket = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
    });
    const shouting = Object.assign(new Error('ECONNRESET READ failed'), { syscall: 'read' });
    for (const cause of [
      socket,
      shouting,
      new Error('ECONNREFUSED'),
      new Error('Socket closed unexpectedly'),
      new Error('The client is closed'),
      new StoreError('unavailable', 'Redis did not answer within 30 ms'),
      'down',
    ]) {
      const error = storeFailure('redisAccessStore.read', cause);
      expect(error.code, String(cause)).toBe('unavailable');
      expect(error.message, String(cause)).toMatch(/^redisAccessStore\.read: Redis failed: /);
      expect(error.cause).toBe(cause);
    }
  });
});

describe('unexpectedReply', () => {
  it('names the step and the reply, cut short, and never throws on a reply JSON cannot carry', () => {
    expect(unexpectedReply('redisAccessStore.read', 'OK').message).toBe(
      'redisAccessStore.read: unexpected Redis reply "OK"',
    );
    expect(unexpectedReply('s', 'x'.repeat(1_000)).message).toBe(
      `s: unexpected Redis reply "${'x'.repeat(199)}`,
    );
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(unexpectedReply('s', cyclic).code).toBe('unexpected_reply');
    expect(unexpectedReply('s', 1n).message).toBe('s: unexpected Redis reply [object BigInt]');
    expect(unexpectedReply('s', undefined).message).toBe('s: unexpected Redis reply undefined');
  });
});
