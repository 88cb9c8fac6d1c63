import { randomUUID } from 'node:crypto';
import pg from 'pg';
import postgres from 'postgres';

/** The drivers the inbox is tested with, each as the application would pass it. */
export const DRIVERS = ['pg Pool', 'pg Client', 'postgres.js'] as const;
export type DriverKind = (typeof DRIVERS)[number];

/** A database handle of `kind` on `url`, as given to the store, and how to close it. */
export async function connect(
  kind: DriverKind,
  url: string,
): Promise<{ db: unknown; close(): Promise<void> }> {
  if (kind === 'pg Pool') {
    const pool = new pg.Pool({ connectionString: url, max: 20 });
    pool.on('error', () => {});
    return { db: pool, close: () => pool.end() };
  }
  if (kind === 'pg Client') {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    return { db: client, close: () => client.end() };
  }
  const sql = postgres(url, { onnotice: () => {}, max: 20 });
  return { db: sql, close: () => sql.end({ timeout: 1 }) };
}

/** A table name of the test's own: letters, digits and `_`, as the store's options require. */
export const uniqueTable = (prefix: string): string =>
  `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
