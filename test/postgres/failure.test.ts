import { describe, expect, it } from 'vitest';
import { SpoolError, StoreError } from '../../src/core/errors/index.js';
import { isTransient } from '../../src/postgres/failure.js';
import { storeFailure } from '../../src/postgres/store-failure.js';
import { SpoolCore } from '../../src/tracker/spool-core.js';

/** A driver error as node-postgres and postgres.js give it: the SQLSTATE (or their own code) in `code`. */
const failed = (code: string, message = `failed with ${code}`) => Object.assign(new Error(message), { code });

// SQLSTATE (or socket / postgres.js code) → whether trying again may succeed.
const TABLE: [string, boolean, string][] = [
  ['40001', true, 'serialization failure'],
  ['40P01', true, 'deadlock detected'],
  ['53100', true, 'disk full'],
  ['53200', true, 'out of memory'],
  ['53300', true, 'too many connections'],
  ['57014', true, 'query cancelled'],
  ['57P01', true, 'admin shutdown'],
  ['57P03', true, 'cannot connect now'],
  ['55P03', true, 'lock not available'],
  ['08006', true, 'connection failure'],
  ['08001', true, 'cannot establish a connection'],
  ['ECONNREFUSED', true, 'nothing listens'],
  ['ECONNRESET', true, 'connection reset'],
  ['CONNECTION_CLOSED', true, 'postgres.js: connection closed'],
  ['42P01', false, 'undefined table'],
  ['42703', false, 'undefined column'],
  ['42501', false, 'insufficient privilege'],
  ['23505', false, 'unique violation'],
  ['25P02', false, 'transaction aborted'],
  ['55000', false, 'object not in prerequisite state'],
  ['22P02', false, 'invalid text representation'],
];

describe('billing-sdk/postgres: one failure classifier for spool and store', () => {
  const spool = new SpoolCore({ name: 'postgresSpool', place: 'on t', transient: isTransient });

  it.each(TABLE)('%s (%s → transient: %s)', (code, transient, what) => {
    const error = failed(code, what);
    expect(isTransient(error)).toBe(transient);
    const fromSpool = spool.failure('append', error);
    const fromStore = storeFailure('postgresDedupeStore.claim', error);
    expect(fromSpool).toBeInstanceOf(SpoolError);
    expect(fromStore).toBeInstanceOf(StoreError);
    expect((fromSpool as SpoolError).code).toBe(transient ? 'unavailable' : 'io');
    expect(fromStore.code).toBe(transient ? 'unavailable' : 'unexpected_reply');
    expect(fromSpool.cause).toBe(error);
    expect(fromStore.cause).toBe(error);
  });

  it('node-postgres messages of a lost connection, without a code, are transient; anything else is not', () => {
    expect(isTransient(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isTransient(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isTransient(new Error('syntax error at or near "x"'))).toBe(false);
    expect(isTransient(undefined)).toBe(false);
  });
});
