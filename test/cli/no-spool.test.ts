// An operator's typo is never good news: dead-letters on a place without a spool (a folder that does
// not exist or holds none, a table or stream that is not there) is exit 2 naming the flag, and
// nothing is created there, for every action; --consumer belongs to relay alone.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/cli/args.js';
import { usePostgres } from '../postgres/cluster.js';
import { useRedisServer } from '../redis/redis-server.js';
import { run, useCli } from './helpers.js';

const cli = useCli();
const postgres = usePostgres();
const redis = useRedisServer();
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const ACTIONS = [['list'], ['replay', '1'], ['replay', '--all'], ['drop', '1'], ['drop', '--all']];

describe('dead-letters on a place without a spool', () => {
  it.each(ACTIONS)(
    '%s %s --dir <a folder that does not exist>: exit 2 naming --dir, nothing created',
    async (...action) => {
      const base = mkdtempSync(join(tmpdir(), 'billing-sdk-typo-'));
      made.push(base);
      const dir = join(base, 'spool-typo');
      const result = await run(cli, ['dead-letters', ...action, '--dir', dir]);
      expect(result.code, result.stdout + result.stderr).toBe(2);
      expect(result.stderr).toContain('--dir');
      expect(result.stdout).not.toMatch(/0 dead letters/);
      expect(existsSync(dir)).toBe(false);
    },
  );

  it('an empty folder: exit 2, nothing written in it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-typo-'));
    made.push(dir);
    const result = await run(cli, ['dead-letters', 'list', '--dir', dir]);
    expect(result.code).toBe(2);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a PostgreSQL table that is not there: exit 2 naming the flag, no table made', async () => {
    const table = `typo_${Date.now()}`;
    const result = await run(cli, [
      'dead-letters',
      'drop',
      '--all',
      '--postgres',
      postgres.cluster.url,
      '--table',
      table,
    ]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('--postgres');
    const pool = new pg.Pool({ connectionString: postgres.cluster.url });
    try {
      const { rows } = await pool.query('SELECT to_regclass($1) AS t', [table]);
      expect(rows[0].t).toBeNull();
    } finally {
      await pool.end();
    }
  });

  it('a Redis stream that is not there: exit 2 naming the flag, no stream made', async () => {
    const stream = `typo:${Date.now()}`;
    const result = await run(cli, ['dead-letters', 'list', '--redis', redis.server.url, '--stream', stream]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('--redis');
    const client = new Redis(redis.server.url);
    try {
      expect(await client.exists(stream)).toBe(0);
    } finally {
      await client.quit();
    }
  });
});

describe('--consumer belongs to relay alone', () => {
  it.each([
    ['dead-letters', 'list', '--redis', 'redis://r:6379', '--consumer', 'pod-1'],
    ['doctor', '--postgres', 'postgres://h/db', '--consumer', 'pod-1'],
  ])('%s …: a usage error naming --consumer', (...argv) => {
    expect(parseCommand(argv)).toEqual({ kind: 'error', message: expect.stringContaining('--consumer') });
  });

  it('the bin: exit 2', async () => {
    const result = await run(cli, [
      'dead-letters',
      'list',
      '--redis',
      redis.server.url,
      '--consumer',
      'relay-a',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--consumer is not an option of dead-letters');
  });
});
