import { causeOf } from '../tracker/dead-letters.js';
import type { DeadLetterReason } from '../tracker/options.js';
import type { SpooledEvent } from '../tracker/spool.js';
import { createUsageTracker } from '../tracker/tracker.js';
import type { RelayArgs } from './args.js';
import { clientFromEnv, serviceOfFlags } from './client.js';
import { causeText } from './dead-letters.js';
import { DrainWatch } from './drain-watch.js';
import { messageOf } from './fail.js';
import { withOpenSpool } from './open-spool.js';
import type { Printer } from './printer.js';
import { describeReport, reportOf } from './progress.js';
import { openTarget } from './targets/index.js';

/**
 * `billing-sdk relay`: a usage tracker (`createUsageTracker`, the same sender an app runs) on the
 * spool the flags name (without `--stream` or `--table`, the default one of the service of
 * `BILLING_API_KEY` and `BILLING_BASE_URL`, as the app's tracker uses it), in a process of its own. Without `--once` it sends until `stop` resolves
 * (SIGTERM, SIGINT), then closes the tracker within `--grace`: what it was sending is finished or
 * left in the spool, with its key, for the next relay. With `--once` it flushes what is there and
 * closes. Resolves with the exit code: 0, or 1 when `--once` left events or dead-lettered any.
 */
export async function relay(args: RelayArgs, printer: Printer, stop: Promise<void>): Promise<number> {
  const billing = clientFromEnv();
  const concurrency = args.concurrency ?? 8;
  // The relay's sends, the spool's listener and a step of upkeep may each hold a connection.
  const target = await openTarget(args.spool, {
    connections: concurrency + 2,
    // The stream or table the app's trackers use with this key and URL, unless the flags name one.
    service: serviceOfFlags(args.spool, billing),
  });
  try {
    await withOpenSpool(target);
    // Set once the tracker exists: its counters are the drain's progress.
    let progress = (): number => 0;
    const watch = args.once ? new DrainWatch(() => progress(), args.stallMs) : undefined;
    const tracker = createUsageTracker(billing, {
      spool: target.spool,
      concurrency,
      onDeadLetter: (event: SpooledEvent, reason: DeadLetterReason) => {
        if (printer.json)
          printer.data({
            type: 'dead-letter',
            event_key: event.event_key,
            reason: causeText(causeOf(reason)),
          });
        else printer.warn(`dead-lettered ${event.event_key}: ${causeText(causeOf(reason))}`);
      },
      // A failed send is retried and counted in the reports; what has no event is the spool's.
      onError: (error: unknown, event?: SpooledEvent) => {
        if (!event) printer.warn(messageOf(error));
        else watch?.failed(error);
      },
    });
    progress = () => {
      const { recorded, deadLettered } = tracker.stats();
      return recorded + deadLettered;
    };
    const every = args.intervalMs ?? (printer.live ? 1_000 : 10_000);
    const timer = setInterval(() => {
      const report = reportOf(tracker.stats(), 'progress');
      if (printer.json) printer.data({ ...report });
      else printer.status(describeReport(report));
    }, every);
    try {
      let drained = false;
      let gaveUp = false;
      if (args.once) {
        const flushed = tracker.flush().then(
          () => true,
          (error: unknown) => {
            // Once given up, the close that follows ends the flush: already said.
            if (!gaveUp) printer.warn(`the drain stopped: ${messageOf(error)}`);
            return false;
          },
        );
        const givenUp = (watch as DrainWatch).gaveUp.then((why) => {
          gaveUp = true;
          printer.warn(`the drain gave up: ${why}`);
          return false;
        });
        drained = await Promise.race([flushed, stop.then(() => false), givenUp]);
      } else {
        await stop;
      }
      // Given up: what is being sent now fails as the rest did; it stays in the spool at once.
      const { unsent } = await tracker.close({ timeoutMs: drained || gaveUp ? 0 : args.graceMs });
      // After --once, what the spool still holds by any process counts as left (rows another relay
      // leased, entries appended meanwhile): "0" means the spool was found empty.
      const waiting = args.once
        ? await target.backlog().then(
            (b) => b.waiting ?? 0,
            () => 0,
          )
        : 0;
      const done = reportOf(tracker.stats(), 'done', Math.max(unsent, waiting));
      if (printer.json) printer.data({ ...done });
      else printer.text(describeReport(done));
      return args.once && (done.left > 0 || done.deadLettered > 0) ? 1 : 0;
    } finally {
      clearInterval(timer);
      watch?.stop();
    }
  } finally {
    await target.close().catch(() => undefined);
  }
}
