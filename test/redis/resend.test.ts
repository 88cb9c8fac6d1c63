import { describe, expect, it } from 'vitest';
import { resendDelay } from '../../src/redis/client.js';

// When a Lua step is sent again (src/redis/client.ts): only after a refusal Redis sends before
// running anything, with a growing wait, and never past the step's time. A pure function: no
// Redis, no clock (the time left is an argument).

/** An error reply as node-redis and ioredis pass it on: the code, a space, the text. */
const reply = (message: string) => new Error(message);

describe('resendDelay', () => {
  it.each([
    'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.',
    'LOADING Redis is loading the dataset in memory',
    'TRYAGAIN Multiple keys request during rehashing of slot',
    'CLUSTERDOWN The cluster is down',
    'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no',
  ])('resends a step refused with %s', (message) => {
    expect(resendDelay(reply(message), 0, 1_000)).toBe(10);
  });

  it.each([
    [
      'a reply refusing the step for good',
      reply('WRONGTYPE Operation against a key holding the wrong kind of value'),
    ],
    ['a script error', reply('ERR user_script:1: Script attempted to access a non local key')],
    [
      'a write refused on a replica (the client must move on)',
      reply("READONLY You can't write against a read only replica."),
    ],
    [
      'out of memory (a script may have written before)',
      reply('OOM command not allowed when used memory > maxmemory'),
    ],
    [
      'a lost connection (the step may have run)',
      Object.assign(new Error('read ECONNRESET'), { syscall: 'read' }),
    ],
    ['a closed client', new Error('The client is closed')],
    ['no Error at all', 'BUSY'],
  ])('never resends after %s', (_, error) => {
    expect(resendDelay(error, 0, 1_000)).toBeUndefined();
  });

  it('waits 10, 20, 40, then 50 ms between tries', () => {
    const busy = reply('BUSY Redis is busy running a script.');
    expect([0, 1, 2, 3, 4, 10].map((n) => resendDelay(busy, n, 1_000))).toEqual([10, 20, 40, 50, 50, 50]);
  });

  it('gives up when no more than the wait is left of the step’s time', () => {
    const busy = reply('BUSY Redis is busy running a script.');
    expect(resendDelay(busy, 3, 51)).toBe(50);
    expect(resendDelay(busy, 3, 50)).toBeUndefined();
    expect(resendDelay(busy, 0, 0)).toBeUndefined();
    expect(resendDelay(busy, 0, -5)).toBeUndefined();
  });
});
