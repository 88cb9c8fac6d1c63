import type { DeadLetter, DeadLetterEntry } from './spool.js';
import { parseSpooledEvent } from './spooled-event.js';

/**
 * What the file and Redis spools keep of a letter beside its event (which they keep as the spool
 * held it, never serialised again): one JSON text. Postgres keeps columns.
 */
export function letterMeta(entry: Omit<DeadLetterEntry, 'id'>): string {
  const { reason, attempts, firstAttemptAt, deadLetteredAt } = entry;
  return JSON.stringify({ reason, attempts, firstAttemptAt, deadLetteredAt });
}

/**
 * The letter `id` of a stored event (JSON) and {@link letterMeta}, or `undefined` when they are
 * not one (written by another program).
 */
export function parseLetter(id: string, eventJson: unknown, metaJson: unknown): DeadLetter | undefined {
  const event = parseSpooledEvent(eventJson);
  try {
    const meta = JSON.parse(String(metaJson)) as Partial<DeadLetter> | null;
    if (!event || typeof meta?.reason !== 'object' || meta.reason === null) return undefined;
    return {
      id,
      event,
      reason: meta.reason,
      attempts: Number(meta.attempts) || 0,
      firstAttemptAt: String(meta.firstAttemptAt ?? ''),
      deadLetteredAt: String(meta.deadLetteredAt ?? ''),
    };
  } catch {
    return undefined;
  }
}
