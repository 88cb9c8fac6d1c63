import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { InvalidRequestError, SpoolError } from '../../src/core/errors/index.js';
import { createUsageTracker, deadLetters, type SpooledEvent, type UsageTracker } from '../../src/index.js';
import { fileSpool } from '../../src/node/file-spool.js';
import { memorySpool } from '../../src/tracker/memory-spool.js';
import type { UsageTrackerOptions } from '../../src/tracker/options.js';
import { clientFor, instantClock, useMockServer } from '../helpers.js';
import { METER, PREPAID, withTrackerClock } from './support.js';

const mock = useMockServer();
const EVENTS = '/api/usage/events/';
const root = mkdtempSync(join(tmpdir(), 'billing-sdk-dead-letters-'));
afterAll(() => rm(root, { recursive: true, force: true }));

const open: UsageTracker[] = [];
afterEach(async () => {
  for (const made of open.splice(0)) await made.close({ timeoutMs: 0 }).catch(() => {});
});

function tracker(options: UsageTrackerOptions) {
  const made = createUsageTracker(
    clientFor(mock.server, { maxRetries: 0 }),
    withTrackerClock(options, instantClock()),
  );
  open.push(made);
  return made;
}

const sendsOf = (key: string) =>
  mock.server.requests
    .all({ path: EVENTS })
    .filter((request) => (request.body as { event_key?: string } | undefined)?.event_key === key).length;

describe('dead letters kept by a durable spool', () => {
  it('a 404 and a refusal are told to onDeadLetter and kept with their reasons; once the account exists, a replay records the event once, under its key', async () => {
    const spool = fileSpool(join(root, 'replay'));
    const told: [SpooledEvent, string][] = [];
    const first = tracker({
      spool,
      concurrency: 1,
      onDeadLetter: (event, reason) => void told.push([event, reason.type]),
    });
    const unknown = await first.track({ ...METER, account_ref_id: 'acct_later', quantity: 3 });
    const refused = await first.track({ ...PREPAID, quantity: 1 });
    const good = await first.track({ ...METER, quantity: 2 });
    await first.flush();
    expect(told.map(([event, type]) => [event.event_key, type])).toEqual([
      [unknown.event_key, 'error'],
      [refused.event_key, 'refused'],
    ]);
    expect(first.stats()).toMatchObject({ recorded: 1, deadLettered: 2, queued: 0, inFlight: 0 });
    expect(mock.server.store.usageEvent(good.event_key)?.quantity).toBe(2);

    // The spool is open while its tracker runs: its letters can be read from the same process.
    const letters = deadLetters(spool);
    const kept = await letters.list();
    expect(kept.map((letter) => letter.event.event_key)).toEqual([unknown.event_key, refused.event_key]);
    expect(kept[0]).toMatchObject({
      event: { ...METER, account_ref_id: 'acct_later', quantity: 3 },
      reason: { type: 'error', name: 'NotFoundError', status: 404 },
      attempts: 1,
    });
    expect(kept[1]?.reason).toMatchObject({
      type: 'refused',
      result: { accepted: false, error_code: 'invalid_usage_model' },
    });
    for (const letter of kept) {
      expect(Date.parse(letter.firstAttemptAt)).toBeLessThanOrEqual(Date.parse(letter.deadLetteredAt));
    }

    // The cause fixed: the letter goes back into the spool, and the next run sends it.
    mock.server.store.addAccount({ account_ref_id: 'acct_later', customer_email: 'later@example.com' });
    const [unknownLetter, refusedLetter] = kept as [(typeof kept)[0], (typeof kept)[0]];
    expect(await letters.replay([unknownLetter.id])).toEqual([unknownLetter.id]);
    await first.close();
    const second = tracker({ spool });
    await second.flush();
    expect(mock.server.store.usageEvent(unknown.event_key)?.quantity).toBe(3);
    expect(sendsOf(unknown.event_key)).toBe(2); // the 404, then the replay: recorded once
    expect(second.stats()).toMatchObject({ recorded: 1, deadLettered: 0, queued: 0 });
    expect((await letters.list()).map((letter) => letter.id)).toEqual([refusedLetter.id]);

    expect(await letters.drop([refusedLetter.id])).toEqual([refusedLetter.id]);
    await second.close();
    const third = tracker({ spool });
    await third.flush();
    expect(sendsOf(refused.event_key)).toBe(1); // dropped: never sent again
    expect(third.stats().recorded).toBe(0);
  });

  it('a letter of an event the service had recorded (a replay too many) is answered idempotent when replayed: counted once', async () => {
    const spool = fileSpool(join(root, 'twice'));
    const made = tracker({ spool });
    const event = await made.track({ ...METER, quantity: 5 });
    await made.flush();
    const total = () =>
      mock.server.store.usageTotal(METER.account_ref_id, METER.product_code, METER.meter_code);
    const before = total();
    await made.close();
    // The same event (its key) in the spool again, given up on, kept, replayed.
    await spool.open();
    await spool.append([{ ...METER, quantity: 5, event_key: event.event_key }]);
    const [entry] = await spool.take(10);
    await spool.deadLetter?.([
      {
        id: entry!.id,
        reason: { type: 'error', name: 'APIConnectionError', message: 'x' },
        attempts: 1,
        firstAttemptAt: '',
        deadLetteredAt: '',
      },
    ]);
    expect(await deadLetters(spool).replay('all')).toHaveLength(1);
    await spool.close();
    const next = tracker({ spool });
    await next.flush();
    expect(sendsOf(event.event_key)).toBe(2);
    expect(next.stats().recorded).toBe(1);
    expect(total()).toBe(before);
    expect(mock.server.store.usageEvent(event.event_key)?.quantity).toBe(5);
  });

  it('a move that fails is told to onError and leaves the entry in the spool (a later run sends it again, under its key): nothing lost', async () => {
    const inner = memorySpool();
    const spool = {
      ...inner,
      open: () => inner.open(),
      close: () => inner.close(),
      deadLetter: () => Promise.reject(new SpoolError('unavailable', 'store down')),
      listDeadLetters: async () => [],
      replayDeadLetters: async () => [],
      dropDeadLetters: async () => [],
    };
    const errors: unknown[] = [];
    const told: string[] = [];
    const made = tracker({
      spool,
      onDeadLetter: (event) => void told.push(event.event_key),
      onError: (error) => void errors.push(error),
    });
    const { event_key } = await made.track({ ...PREPAID, quantity: 1 });
    await made.flush();
    expect(told).toEqual([event_key]);
    expect(errors.some((error) => error instanceof SpoolError && error.code === 'unavailable')).toBe(true);
    expect(made.stats()).toMatchObject({ deadLettered: 1, queued: 0 });
    await made.close();
    // Not acknowledged: the spool opened again (as the next run) hands it.
    await inner.open();
    expect((await inner.take(10)).map((left) => left.event.event_key)).toEqual([event_key]);
    await inner.close();
  });

  it('a memory spool keeps none: its dead letters go to onDeadLetter only, and deadLetters(spool) says so', async () => {
    const spool = memorySpool();
    const made = tracker({ spool });
    await made.track({ ...PREPAID, quantity: 1 });
    await made.flush();
    expect(made.stats().deadLettered).toBe(1);
    expect(() => deadLetters(spool)).toThrow(InvalidRequestError);
    expect(() => deadLetters(spool)).toThrow(/spool/);
  });
});
