import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SpoolError } from '../../core/errors/index.js';
import { fileSpool, oldestAppendedAt } from '../../node/file-spool.js';
import type { SpoolFlags } from '../args.js';
import { CliFailure, messageOf } from '../fail.js';
import type { SpoolTarget } from './target.js';

/** The file spool's log in its directory (src/node/file-spool.ts names it). */
const LOG = 'spool.log';

/**
 * `--dir <path>`: the `fileSpool` of that directory. One process at a time holds it (its lock),
 * so the backlog is counted by opening it (when the command does not hold it open): while another
 * process holds it, the count is left out.
 */
export function fileTarget(flags: Extract<SpoolFlags, { kind: 'file' }>): SpoolTarget {
  let spool: ReturnType<typeof fileSpool>;
  try {
    spool = fileSpool(flags.dir);
  } catch (error) {
    throw new CliFailure(messageOf(error));
  }
  return {
    label: `file spool in ${flags.dir}`,
    spool,
    async backlog() {
      if (!existsSync(join(flags.dir, LOG))) return { present: false };
      try {
        await spool.open();
      } catch (error) {
        if (error instanceof SpoolError && error.code === 'locked') {
          return { present: true, note: 'held by a running process (a relay or an app): not counted' };
        }
        throw error;
      }
      try {
        const waiting = await (spool.size as () => Promise<number>)();
        const at = oldestAppendedAt(spool);
        // Entries of a log written before append times were recorded have no age: left out.
        return {
          present: true,
          waiting,
          oldestMs: at === undefined ? undefined : Math.max(0, Date.now() - at),
        };
      } finally {
        await spool.close();
      }
    },
    close: async () => undefined,
  };
}
