import { deadLetters, keepsDeadLetters } from '../tracker/dead-letters.js';
import type { SpoolFlags } from './args.js';
import { type CheckResult, failedCheck, pass, skip } from './check.js';
import { CliFailure, messageOf } from './fail.js';
import { withOpenSpool } from './open-spool.js';
import { duration } from './progress.js';
import { openTarget, type SpoolTarget } from './targets/index.js';

/**
 * Age past which a waiting event fails the backlog check: a relay (or an app's tracker) sends
 * within seconds while the service answers, so an event this old says none is running, or that the
 * service has been failing that long.
 */
export const STALE_MS = 15 * 60_000;

/** How many dead letters the spool keeps: any is a failure (events not charged until replayed). */
async function deadLetterCheck(target: SpoolTarget): Promise<CheckResult> {
  if (!keepsDeadLetters(target.spool)) return skip('dead letters', 'this spool keeps none');
  let count: number;
  try {
    count = (await withOpenSpool(target, async () => (await deadLetters(target.spool).list()).length)) ?? 0;
  } catch (error) {
    // A file spool's lock held by its relay or app: the letters are there, but not readable now.
    if (error instanceof CliFailure) return skip('dead letters', `not counted: ${error.message}`);
    throw error;
  }
  if (count === 0) return pass('dead letters', 'none');
  return failedCheck(
    'dead letters',
    `${count} events the service refused for good, not charged: see them with billing-sdk dead-letters list (same spool flags), replay them once the cause is fixed`,
  );
}

/**
 * The checks of a spool: it can be reached (and its driver is installed), its table, stream or log
 * is there, how many events wait and for how long, and how many dead letters it keeps.
 */
export async function spoolChecks(flags: SpoolFlags): Promise<CheckResult[]> {
  let target: Awaited<ReturnType<typeof openTarget>>;
  try {
    target = await openTarget(flags, { connections: 2 });
  } catch (error) {
    if (!(error instanceof CliFailure)) throw error;
    return [failedCheck('spool', error.message), skip('backlog', 'not checked: no spool')];
  }
  try {
    const backlog = await target.backlog();
    if (!backlog.present) {
      return [
        pass('spool', `${target.label} reachable`),
        failedCheck(
          'backlog',
          `no ${flags.kind === 'redis' ? 'stream' : flags.kind === 'file' ? 'spool log' : 'table'} there yet: check the flags against the app's spool (a tracker or relay makes it when it first opens the spool)`,
        ),
      ];
    }
    const checks = [pass('spool', `${target.label} reachable`)];
    if (backlog.waiting === undefined) {
      checks.push(skip('backlog', backlog.note ?? 'not counted'));
    } else {
      const oldest = backlog.oldestMs;
      const text = `${backlog.waiting} events waiting${backlog.waiting && oldest !== undefined ? `, the oldest for ${duration(oldest)}` : ''}`;
      checks.push(
        oldest !== undefined && oldest > STALE_MS
          ? failedCheck('backlog', `${text}: is a relay running, and does the service answer it?`)
          : pass('backlog', text),
      );
    }
    checks.push(await deadLetterCheck(target));
    return checks;
  } catch (error) {
    return [failedCheck('spool', `${target.label}: ${messageOf(error)}`), skip('backlog', 'not checked')];
  } finally {
    await target.close().catch(() => undefined);
  }
}
