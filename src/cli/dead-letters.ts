import { deadLetters } from '../tracker/dead-letters.js';
import type { DeadLetter, DeadLetterCause } from '../tracker/spool.js';
import type { DeadLettersArgs } from './args.js';
import { serviceOfFlags } from './client.js';
import { requireSpool, withOpenSpool } from './open-spool.js';
import type { Printer } from './printer.js';
import { openTarget } from './targets/index.js';

/**
 * A dead letter's reason in one line, as a relay tells it and as `dead-letters list` shows it: the
 * service's refusal code, or the error's status, class and message.
 */
export function causeText(cause: DeadLetterCause): string {
  if (cause.type === 'refused') return `refused: ${cause.result.error_code}`;
  return `${cause.status === undefined ? '' : `${cause.status} `}${cause.name}: ${cause.message}`;
}

/** A letter as one JSON line. */
const letterJson = (letter: DeadLetter): Record<string, unknown> => ({
  type: 'dead-letter',
  id: letter.id,
  event: letter.event,
  reason: letter.reason,
  attempts: letter.attempts,
  firstAttemptAt: letter.firstAttemptAt,
  deadLetteredAt: letter.deadLetteredAt,
});

/** A letter as one line of text. */
function letterText(letter: DeadLetter): string {
  const { event } = letter;
  const what = `${event.account_ref_id} ${event.product_code}/${event.meter_code} ×${event.quantity}`;
  return `${letter.id}  ${event.event_key}  ${what}  ${causeText(letter.reason)}  (${letter.attempts} attempts, ${letter.deadLetteredAt})`;
}

/**
 * `billing-sdk dead-letters list | replay | drop`: `deadLetters(spool)` on the spool the flags
 * name. A replay moves letters back into the spool under their original `event_key` (a relay or
 * the app's tracker sends them; the service answers a key it recorded `idempotent: true`). Resolves
 * with the exit code: 1 when an id given is no dead letter (the others are done), else 0.
 */
export async function deadLettersCommand(args: DeadLettersArgs, printer: Printer): Promise<number> {
  const target = await openTarget(args.spool, { connections: 2, service: serviceOfFlags(args.spool) });
  try {
    await requireSpool(target, args.spool);
    const code = await withOpenSpool(target, async () => {
      const letters = deadLetters(target.spool);
      if (args.action === 'list') {
        const all = await letters.list();
        for (const letter of all) {
          if (printer.json) printer.data(letterJson(letter));
          else printer.text(letterText(letter));
        }
        if (!printer.json) printer.text(`${all.length} dead letters in the ${target.label}`);
        return 0;
      }
      const done = await letters[args.action](args.ids);
      const unknown = args.ids === 'all' ? [] : args.ids.filter((id) => !done.includes(id));
      const verb = args.action === 'replay' ? 'replayed' : 'dropped';
      if (printer.json) printer.data({ type: verb, ids: done, unknown });
      else printer.text(`${verb} ${done.length}${done.length ? `: ${done.join(' ')}` : ''}`);
      for (const id of unknown) printer.warn(`no dead letter ${id} in the ${target.label}`);
      return unknown.length ? 1 : 0;
    });
    return code ?? 0;
  } finally {
    await target.close().catch(() => undefined);
  }
}
