import type { SpoolFlags } from './args.js';
import { CliFailure, messageOf } from './fail.js';
import type { SpoolTarget } from './targets/index.js';

/** The flag that names where a spool is, as the command line gave it. */
export function placeFlag(flags: SpoolFlags): string {
  if (flags.kind === 'file') return `--dir ${flags.dir}`;
  if (flags.kind === 'postgres') return '--postgres (with --table and --schema)';
  return '--redis (with --stream)';
}

/**
 * Refuses a place that holds no spool (no spool log in the folder, no table, no stream) with a
 * {@link CliFailure} naming the flag (exit 2), before anything opens the spool, so nothing is
 * created there: an operator's typo is never answered "0 dead letters".
 */
export async function requireSpool(target: SpoolTarget, flags: SpoolFlags): Promise<void> {
  let present: boolean;
  try {
    present = (await target.backlog()).present;
  } catch (error) {
    throw new CliFailure(`cannot read the ${target.label}: ${messageOf(error)}`);
  }
  if (!present)
    throw new CliFailure(
      `no spool at ${placeFlag(flags)} (the ${target.label} has none yet): check the flag against the app's spool; nothing was created`,
    );
}

/**
 * Runs `step` on the target's spool, opened (a file spool's lock is taken: a relay or app holding
 * it is a {@link CliFailure} saying so, exit 2) and closed after. Without `step`, opens and closes
 * it once: a spool out of reach fails now (exit 2), not in the background.
 */
export async function withOpenSpool<T>(target: SpoolTarget, step?: () => Promise<T>): Promise<T | undefined> {
  try {
    await target.spool.open();
  } catch (error) {
    throw new CliFailure(`cannot open the ${target.label}: ${messageOf(error)}`);
  }
  try {
    return await step?.();
  } finally {
    await target.spool.close();
  }
}
