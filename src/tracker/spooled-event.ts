import type { SpooledEvent } from './spool.js';

/**
 * The event of a stored entry's JSON, or `undefined` when it is not one: a spool that keeps events
 * outside this process (a Redis stream, a PostgreSQL table) may hold what another program wrote.
 */
export function parseSpooledEvent(json: unknown): SpooledEvent | undefined {
  try {
    const event = JSON.parse(String(json)) as Partial<SpooledEvent> | null;
    return typeof event?.event_key === 'string' ? (event as SpooledEvent) : undefined;
  } catch {
    return undefined;
  }
}
