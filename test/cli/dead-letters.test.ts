// `billing-sdk dead-letters` as a process on a real PostgreSQL, redis-server and file spool: an
// event the service refuses with 400 is dead-lettered by the relay, `list` shows it with its
// reason, `doctor` counts it, `replay` puts it back under its key and the next relay records it
// once; `drop` deletes one for good, and an id that is no letter exits 1.
import { describe, expect, it } from 'vitest';
import { usePostgres } from '../postgres/cluster.js';
import { useRedisServer } from '../redis/redis-server.js';
import { durableSpools, events, run, seed, USAGE_PATH, useBackend, useCli } from './helpers.js';

const cli = useCli();
const postgres = usePostgres();
const redis = useRedisServer();

describe.each(durableSpools(postgres, redis))('dead letters of a %s spool', (_, make) => {
  const current = useBackend(cli, make);

  /** Seeds `n` events and relays them with the first answered 400: that one is dead-lettered. */
  async function refuseOne(n: number) {
    const list = events(n);
    await seed(current.backend, list);
    cli.mock.faults.add({ method: 'POST', path: USAGE_PATH, status: 400, times: 1 });
    const relayed = await run(cli, ['relay', ...current.backend.flags, '--once', '--json']);
    expect(relayed.code, relayed.stderr).toBe(1);
    const listed = await run(cli, ['dead-letters', 'list', ...current.backend.flags, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    return { list, letters: listed.json };
  }

  it('list shows the refused event with its reason; replay after the fix records it once', async () => {
    const { list, letters } = await refuseOne(3);
    expect(letters).toHaveLength(1);
    const [letter] = letters as [
      { id: string; event: { event_key: string }; reason: { status?: number }; attempts: number },
    ];
    const key = letter.event.event_key;
    expect(list.map((e) => e.event_key)).toContain(key);
    expect(letter.reason.status).toBe(400);
    expect(letter.attempts).toBeGreaterThanOrEqual(1);
    expect(cli.mock.store.usageEvent(key)).toBeUndefined();

    const doctor = await run(cli, ['doctor', ...current.backend.flags, '--json']);
    expect(doctor.code).toBe(1);
    const checks = doctor.json[0]?.checks as { check: string; ok: boolean | null; detail: string }[];
    expect(checks.find((c) => c.check === 'dead letters')).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/^1 events/),
    });

    const replayed = await run(cli, [
      'dead-letters',
      'replay',
      letter.id,
      ...current.backend.flags,
      '--json',
    ]);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.json[0]).toMatchObject({ type: 'replayed', ids: [letter.id], unknown: [] });

    const relayed = await run(cli, ['relay', ...current.backend.flags, '--once', '--json']);
    expect(relayed.code, relayed.stderr).toBe(0);
    expect(relayed.json.find((l) => l.type === 'done')).toMatchObject({
      recorded: 1,
      deadLettered: 0,
      left: 0,
    });
    expect(cli.mock.store.usageEvent(key)?.quantity).toBe(1);
    const posts = cli.mock.requests.count(
      (r) => r.path === USAGE_PATH && (r.body as { event_key?: string } | undefined)?.event_key === key,
    );
    expect(posts, 'the refused send and the replay').toBe(2);
    const after = await run(cli, ['dead-letters', 'list', ...current.backend.flags, '--json']);
    expect(after.json).toEqual([]);
  });

  it('drop deletes a letter for good; an id that is no letter exits 1', async () => {
    const { letters } = await refuseOne(2);
    const id = String(letters[0]?.id);
    const dropped = await run(cli, ['dead-letters', 'drop', id, 'no-such-letter', ...current.backend.flags]);
    expect(dropped.code).toBe(1);
    expect(dropped.stdout).toContain(`dropped 1: ${id}`);
    expect(dropped.stderr).toContain('no dead letter no-such-letter');
    const after = await run(cli, ['dead-letters', 'list', ...current.backend.flags]);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain('0 dead letters');
  });
});

it.each([
  [['dead-letters'], 'dead-letters needs list, replay or drop'],
  [['dead-letters', 'replay', '--dir', '/tmp/x'], 'which ones?'],
  [['dead-letters', 'drop', 'a', '--all', '--dir', '/tmp/x'], 'not both'],
  [['dead-letters', 'list', 'a', '--dir', '/tmp/x'], 'takes no ids'],
  [['dead-letters', 'list', '--dir', '/tmp/x', '--once'], '--once is not an option of dead-letters'],
])('%j: exit 2 and says why', async (argv, message) => {
  const result = await run(cli, argv);
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(message);
});
