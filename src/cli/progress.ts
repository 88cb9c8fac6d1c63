import type { TrackerStats } from '../tracker/event-book.js';

/** One report of a relay: what `--json` prints per line, and the terminal's status line says. */
export interface RelayReport {
  /** `'progress'` every interval, `'done'` once it stopped. */
  type: 'progress' | 'done';
  /** Events the service recorded (replays it answered `idempotent: true` included). */
  recorded: number;
  /** Failed sends that are sent again. */
  retried: number;
  /** Events the service refused for good. */
  deadLettered: number;
  /** Events waiting or being sent; at `'done'`, what is left in the spool for the next relay. */
  left: number;
  /** Age of the oldest of them in ms, 0 when none. */
  oldestMs: number;
}

/** The report of the tracker's counters now. */
export function reportOf(stats: TrackerStats, type: RelayReport['type'], left?: number): RelayReport {
  return {
    type,
    recorded: stats.recorded,
    retried: stats.retries,
    deadLettered: stats.deadLettered,
    left: left ?? stats.queued + stats.inFlight,
    oldestMs: stats.oldestQueuedMs,
  };
}

/** A duration for people: `850 ms`, `12 s`, `4 min`, `3 h`. */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1_000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

/** The report as one line of text. */
export function describeReport(report: RelayReport): string {
  const oldest = report.left && report.oldestMs ? ` (oldest ${duration(report.oldestMs)})` : '';
  return `${report.type === 'done' ? 'stopped: ' : ''}sent ${report.recorded} · retried ${report.retried} · dead-lettered ${report.deadLettered} · left ${report.left}${oldest}`;
}
