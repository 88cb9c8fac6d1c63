// `billing-sdk relay` as a process, against the mock over HTTP and a real PostgreSQL, redis-server
// and file spool: --once drains everything exactly once; a SIGTERM in the middle of a slow drain
// loses and doubles nothing (the next relay sends the rest, each event recorded once); a 400
// dead-letters (exit 1); bad flags and a spool out of reach exit 2.
import { describe, expect, it } from 'vitest';
import type { MockServer } from '../../src/testing/index.js';
import type { SpooledEvent } from '../../src/tracker/spool.js';
import { usePostgres } from '../postgres/cluster.js';
import { waitUntil } from '../redis/processes.js';
import { useRedisServer } from '../redis/redis-server.js';
import { durableSpools, events, run, seed, start, USAGE_PATH, useBackend, useCli } from './helpers.js';

const cli = useCli();
const postgres = usePostgres();
const redis = useRedisServer();

/** How many usage requests reached the mock for each key of `list`. */
function postsPerKey(mock: MockServer, list: SpooledEvent[]): number[] {
  const keys = new Set(list.map((e) => e.event_key));
  const counts = new Map<string, number>();
  for (const r of mock.requests.all({ method: 'POST', path: USAGE_PATH })) {
    const key = (r.body as { event_key?: string } | undefined)?.event_key;
    if (key && keys.has(key)) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return list.map((e) => counts.get(e.event_key) ?? 0);
}

const recordedOnce = (mock: MockServer, list: SpooledEvent[]) =>
  list.filter((e) => mock.store.usageEvent(e.event_key)?.quantity === e.quantity).length;

const doneOf = (json: Record<string, unknown>[]) => json.find((l) => l.type === 'done');

describe.each(durableSpools(postgres, redis))('relay on a %s spool', (_, make) => {
  const current = useBackend(cli, make);

  it('--once sends every event exactly once and exits 0; a second --once finds nothing', async () => {
    const list = events(40);
    await seed(current.backend, list);
    const first = await run(cli, ['relay', ...current.backend.flags, '--once', '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(doneOf(first.json)).toMatchObject({ recorded: 40, deadLettered: 0, left: 0 });
    expect(postsPerKey(cli.mock, list)).toEqual(list.map(() => 1));
    expect(recordedOnce(cli.mock, list)).toBe(40);

    const second = await run(cli, ['relay', ...current.backend.flags, '--once', '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(doneOf(second.json)).toMatchObject({ recorded: 0, left: 0 });
    expect(postsPerKey(cli.mock, list)).toEqual(list.map(() => 1));
  });

  it('SIGTERM in the middle of a slow drain stops cleanly; the next relay sends the rest, nothing lost or doubled', async () => {
    const list = events(60);
    await seed(current.backend, list);
    cli.mock.faults.add({ method: 'POST', path: USAGE_PATH, delayMs: 250, times: Number.POSITIVE_INFINITY });
    // The same --consumer for both relays: the second takes back at once what the first held (a
    // relay of another name would wait out the spool's claim time, 30 s, for it).
    const flags = [
      ...current.backend.flags,
      ...(current.backend.flags[0] === '--dir' ? [] : ['--consumer', 'relay-a']),
    ];
    const relay = start(cli, ['relay', ...flags, '--json', '--concurrency', '4', '--grace', '300']);
    await waitUntil(
      'some events recorded',
      () => recordedOnce(cli.mock, list) >= 8,
      () => recordedOnce(cli.mock, list),
    );
    relay.process.kill('SIGTERM');
    const stopped = await relay.exited;
    expect(stopped.code, stopped.stderr).toBe(0);
    const done = doneOf(stopped.json);
    expect(done?.left, 'it stopped with events left').toBeGreaterThan(0);

    cli.mock.faults.clear();
    const rest = await run(cli, ['relay', ...flags, '--once', '--json']);
    expect(rest.code, rest.stderr).toBe(0);
    expect(recordedOnce(cli.mock, list)).toBe(60);
    // A request the stop cut short may have been recorded and is sent again under its key (answered
    // idempotent); none is sent more than that once again.
    expect(Math.max(...postsPerKey(cli.mock, list))).toBeLessThanOrEqual(2);
  });

  it('an event the service refuses with 400 is dead-lettered: reported, and --once exits 1', async () => {
    const list = events(3);
    await seed(current.backend, list);
    cli.mock.faults.add({ method: 'POST', path: USAGE_PATH, status: 400, times: 1 });
    const result = await run(cli, ['relay', ...current.backend.flags, '--once', '--json']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.json.filter((l) => l.type === 'dead-letter')).toHaveLength(1);
    expect(doneOf(result.json)).toMatchObject({ recorded: 2, deadLettered: 1, left: 0 });
  });
});

describe.each(durableSpools(postgres, redis).filter(([name]) => name !== 'file'))(
  'relay on a shared %s spool',
  (_, make) => {
    const current = useBackend(cli, make);

    it('sends what other processes append while it runs, then stops on SIGTERM with exit 0', async () => {
      const relay = start(cli, ['relay', ...current.backend.flags, '--json', '--interval', '100']);
      await relay.line((l) => l.type === 'progress');
      const list = events(10);
      await seed(current.backend, list);
      await waitUntil(
        'the appended events recorded',
        () => recordedOnce(cli.mock, list) === 10,
        () => recordedOnce(cli.mock, list),
      );
      relay.process.kill('SIGTERM');
      const stopped = await relay.exited;
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.json.find((l) => l.type === 'done')).toMatchObject({ recorded: 10, left: 0 });
      expect(postsPerKey(cli.mock, list)).toEqual(list.map(() => 1));
    });
  },
);

describe('relay refuses to start', () => {
  it.each([
    [[], 'which spool?'],
    [['--dir', '/tmp/x', '--redis', 'redis://127.0.0.1:1'], 'give one spool'],
    [['--dir', '/tmp/x', '--table', 't'], '--table needs --postgres'],
    [['--dir', '/tmp/x', '--concurrency', '0'], 'bad --concurrency'],
    [['--dir', '/tmp/x', '--nope'], "'--nope'"],
    [['--postgres', 'http://x'], 'bad --postgres URL'],
  ])('relay %j: exit 2 and says why', async (flags, message) => {
    const result = await run(cli, ['relay', ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('a PostgreSQL out of reach: exit 2, naming it without its password', async () => {
    const result = await run(cli, ['relay', '--postgres', 'postgres://u:secret@127.0.0.1:1/db', '--once']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cannot use PostgreSQL at postgres://u:***@127.0.0.1:1/db');
  });

  it('a Redis out of reach: exit 2', async () => {
    const result = await run(cli, ['relay', '--redis', 'redis://127.0.0.1:1', '--once']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cannot reach Redis at redis://127.0.0.1:1');
  });

  it('without BILLING_API_KEY: exit 2, naming it', async () => {
    const result = await run(cli, ['relay', '--dir', '/tmp/none', '--once'], { BILLING_API_KEY: '' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('BILLING_API_KEY is not set');
  });
});
