import type { SpoolFlags } from './args.js';
import { type CheckResult, fail, pass, skip } from './check.js';
import { CliFailure, messageOf } from './fail.js';
import { duration } from './progress.js';
import { openTarget } from './targets/index.js';

/**
 * Age past which a waiting event fails the backlog check: a relay (or an app's tracker) sends
 * within seconds while the service answers, so an event this old says none is running, or that the
 * service has been failing that long.
 */
export const STALE_MS = 15 * 60_000;

/**
 * The checks of a spool: it can be reached (and its driver is installed), its table, stream or log
 * is there, and how many events wait and for how long.
 */
export async function spoolChecks(flags: SpoolFlags): Promise<CheckResult[]> {
  let target: Awaited<ReturnType<typeof openTarget>>;
  try {
    target = await openTarget(flags, { connections: 2 });
  } catch (error) {
    if (!(error instanceof CliFailure)) throw error;
    return [fail('spool', error.message), skip('backlog', 'not checked: no spool')];
  }
  try {
    const backlog = await target.backlog();
    if (!backlog.present) {
      return [
        pass('spool', `${target.label} reachable`),
        fail(
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
          ? fail('backlog', `${text}: is a relay running, and does the service answer it?`)
          : pass('backlog', text),
      );
    }
    return checks;
  } catch (error) {
    return [fail('spool', `${target.label}: ${messageOf(error)}`), skip('backlog', 'not checked')];
  } finally {
    await target.close().catch(() => undefined);
  }
}
