import { deadLetters, keepsDeadLetters } from '../tracker/dead-letters.js';
import type { SpoolFlags } from './args.js';
import { type CheckResult, failedCheck, pass, skip } from './check.js';
import { serviceOfFlags } from './client.js';
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
 * The default streams or tables of other services beside the spool's, with their backlogs: after a
 * key rotation (or an upgrade from a release that shared one default), the events written under
 * the old key wait there for a relay under the new one. Events another service's relays send are
 * young; ones older than {@link STALE_MS} have no relay, and fail the check with the command
 * that sends them.
 */
export async function otherSpoolsCheck(
  target: SpoolTarget,
  flags: SpoolFlags,
): Promise<CheckResult | undefined> {
  if (!target.others || flags.kind === 'file') return undefined;
  let others: Awaited<ReturnType<NonNullable<SpoolTarget['others']>>>;
  try {
    others = await target.others();
  } catch (error) {
    // A user allowed to use the spool may not be allowed to list (SCAN, the catalog): said, not failed.
    return skip('other spools', `not listed: ${messageOf(error)}`);
  }
  if (!others)
    return skip(
      'other spools',
      "not looked for on this Redis Cluster client (SCAN reads one node): install ioredis, or list them with redis-cli --cluster call <node> SCAN 0 MATCH 'billing-sdk:usage*' TYPE stream",
    );
  const busy = others.filter((o) => o.waiting > 0);
  const kind = flags.kind === 'redis' ? 'stream' : 'table';
  if (!busy.length)
    return pass(
      'other spools',
      others.length ? `${others.length} other default ${kind}s, none holds events` : 'none',
    );
  const held = busy
    .map(
      (o) =>
        `${o.name} holds ${o.waiting}${o.oldestMs === undefined ? '' : `, the oldest for ${duration(o.oldestMs)}`}`,
    )
    .join('; ');
  const send = `billing-sdk relay ${flags.kind === 'redis' ? '--redis … --stream' : '--postgres … --table'} <name> --once sends one's events with the current key`;
  return busy.some((o) => (o.oldestMs ?? 0) > STALE_MS)
    ? failedCheck(
        'other spools',
        `${held}: no relay sends them (a rotated API key, an earlier release's default?): ${send}`,
      )
    : pass('other spools', `${held} (another service's, if its relays run; else ${send})`);
}

/**
 * The checks of a spool: it can be reached (and its driver is installed), its table, stream or log
 * is there, how many events wait and for how long, how many dead letters it keeps, and what the
 * default streams or tables of other services hold. Without `--stream` or `--table`, the spool is
 * the default one of the service `BILLING_API_KEY` and `BILLING_BASE_URL` name.
 */
export async function spoolChecks(flags: SpoolFlags): Promise<CheckResult[]> {
  let target: Awaited<ReturnType<typeof openTarget>>;
  try {
    target = await openTarget(flags, { connections: 2, service: serviceOfFlags(flags) });
  } catch (error) {
    if (!(error instanceof CliFailure)) throw error;
    return [failedCheck('spool', error.message), skip('backlog', 'not checked: no spool')];
  }
  try {
    const backlog = await target.backlog();
    if (!backlog.present) {
      const checks = [
        pass('spool', `${target.label} reachable`),
        failedCheck(
          'backlog',
          `no ${flags.kind === 'redis' ? 'stream' : flags.kind === 'file' ? 'spool log' : 'table'} there yet: check the flags against the app's spool (a tracker or relay makes it when it first opens the spool)`,
        ),
      ];
      // A new key's stream not made yet, beside the old key's that holds the events: both said.
      const others = await otherSpoolsCheck(target, flags);
      return others ? [...checks, others] : checks;
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
    const others = await otherSpoolsCheck(target, flags);
    if (others) checks.push(others);
    return checks;
  } catch (error) {
    return [failedCheck('spool', `${target.label}: ${messageOf(error)}`), skip('backlog', 'not checked')];
  } finally {
    await target.close().catch(() => undefined);
  }
}
