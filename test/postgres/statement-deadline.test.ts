import { createServer } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresJsSql } from '../../src/postgres/driver-shapes.js';
import { postgresSpool } from '../../src/postgres/index.js';
import { StatementTimeout, withDeadline } from '../../src/postgres/statement-deadline.js';

// postgres.js cancels a statement on a connection of its own, and its `cancel()` answers a promise:
// Postgres closes that connection once it read the request, which can reject it with ECONNRESET.
// A statement past its bound must fail with StatementTimeout alone, never leave that rejection
// unhandled (CI saw `read ECONNRESET` as an unhandled rejection under a LOCK TABLE).

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
  unhandled.length = 0;
});
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

describe('a statement past its bound', () => {
  it('fails with StatementTimeout, and a cancel that rejects is not left unhandled', async () => {
    process.on('unhandledRejection', onUnhandled);
    const never = new Promise<never>(() => {});
    await expect(withDeadline(never, 5, () => Promise.reject(reset()))).rejects.toBeInstanceOf(
      StatementTimeout,
    );
    await settle();
    expect(unhandled).toEqual([]);
  });

  it("postgres.js: the statement's cancel rejecting (its connection reset) is not left unhandled", async () => {
    process.on('unhandledRejection', onUnhandled);
    let cancels = 0;
    const sql = {
      unsafe: () =>
        Object.assign(new Promise<never>(() => {}), {
          cancel: () => {
            cancels++;
            return Promise.reject(reset());
          },
        }),
    };
    await expect(postgresJsSql(sql as never).query('SELECT 1', [], 5)).rejects.toBeInstanceOf(
      StatementTimeout,
    );
    await settle();
    expect(cancels).toBe(1);
    expect(unhandled).toEqual([]);
  });

  it("postgres.js 3.4: Query.cancel() drops its canceller's promise; that promise rejecting is handled all the same", async () => {
    process.on('unhandledRejection', onUnhandled);
    let cancelled = 0;
    // Query as postgres.js 3.4.9 has it (src/query.js): cancel() calls the canceller and returns null,
    // so the canceller's promise (its CancelRequest connection, which can be reset) is nobody's.
    class Query extends Promise<never> {
      canceller: ((query: Query) => Promise<void>) | null = () => {
        cancelled++;
        return Promise.reject(reset());
      };
      cancel() {
        // `this.canceller && (this.canceller(this), this.canceller = null)`: the promise is dropped.
        if (!this.canceller) return this.canceller;
        this.canceller(this);
        this.canceller = null;
        return null;
      }
    }
    const sql = { unsafe: () => new Query(() => {}) };
    await expect(postgresJsSql(sql as never).query('SELECT 1', [], 5)).rejects.toBeInstanceOf(
      StatementTimeout,
    );
    await settle();
    expect(cancelled).toBe(1);
    expect(unhandled).toEqual([]);
  });

  it('a statement answered while its deadline fired is never cancelled (the cancel would reach the next one)', async () => {
    // The reply and the expired timer ready together (a busy process): the deadline gives the reply
    // one more turn, and must not cancel once it came. A CancelRequest names the connection, not
    // the statement: sent late, it cancels whatever that connection runs next.
    let cancels = 0;
    let answer!: (rows: string[]) => void;
    const work = new Promise<string[]>((resolve) => (answer = resolve));
    const result = withDeadline(work, 20, () => void cancels++);
    setTimeout(() => answer(['row']), 20);
    const busyUntil = performance.now() + 40;
    while (performance.now() < busyUntil) {
      // Both timers expire before the loop looks: the deadline's runs first, then the reply's.
    }
    await expect(result).resolves.toEqual(['row']);
    await settle();
    expect(cancels).toBe(0);
  });

  it('node-postgres: a statement that gets no answer is a transient SpoolError, whichever timer fires first', async () => {
    // A server that takes the connection, says it is ready, then answers nothing (a lock wait, a
    // hung server). node-postgres's own read timeout (query_timeout) and the SDK's deadline share
    // the bound: its "Query read timeout" must read as the statement timing out, not as a refusal.
    const ready = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0, 0x5a, 0, 0, 0, 5, 0x49]);
    const server = createServer((socket) => {
      socket.once('data', () => socket.write(ready));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'x', database: 'x', password: 'x', max: 4 });
    pool.on('error', () => {});
    try {
      for (let i = 0; i < 5; i++) {
        // Idle clients in the pool: node-postgres's timer then starts right after the SDK's.
        const clients = await Promise.all([pool.connect(), pool.connect()]);
        for (const client of clients) client.release();
        const spool = postgresSpool(pool, { timeoutMs: 30 });
        await expect(spool.open()).rejects.toMatchObject({ name: 'SpoolError', code: 'unavailable' });
      }
    } finally {
      await pool.end().catch(() => {});
      server.close();
    }
  });
});
