// `billing-sdk relay --redis <url> --cluster` and `doctor` on a Redis Cluster (3 masters, 3
// replicas): the URL of one node is enough; every event of a stream is sent once.
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redisSpool } from '../../src/redis/index.js';
import { keySlot } from '../../src/redis/keys.js';
import { useCluster } from '../redis/cluster.js';
import { events, run, seed, useCli } from './helpers.js';

const cli = useCli();
const ref = useCluster();
let client: Cluster;
beforeAll(async () => {
  client = new Cluster([...ref.cluster.rootNodes]);
  client.on('error', () => {});
}, 30_000);
afterAll(async () => {
  await client?.quit();
});

it('relay --once on a cluster sends every event once; doctor counts them first', async () => {
  const stream = `{cli}:${Date.now()}`;
  const url = `redis://127.0.0.1:${ref.cluster.rootNodes[0]!.port}`;
  const flags = ['--redis', url, '--cluster', '--stream', stream];
  const list = events(30);
  await seed({ flags, spool: () => redisSpool(client, { stream }), cleanup: async () => {} }, list);
  // Other services' default streams, one in each third of the slots (each master's, as the test
  // cluster splits them): doctor lists them all, though SCAN reads one node at a time.
  const others: string[] = [];
  for (let n = 0; others.length < 3; n++) {
    const name = `billing-sdk:usage:${n.toString(16).padStart(32, '0')}`;
    if (Math.floor((keySlot(name) * 3) / 16_384) === others.length) others.push(name);
  }
  for (const name of others)
    await seed(
      { flags, spool: () => redisSpool(client, { stream: name }), cleanup: async () => {} },
      events(1),
    );

  const doctor = await run(cli, ['doctor', ...flags, '--json']);
  expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
  const checks = doctor.json[0]?.checks as { check: string; detail: string }[];
  expect(checks.find((c) => c.check === 'backlog')?.detail).toMatch(/^30 events waiting/);
  const listed = checks.find((c) => c.check === 'other spools')?.detail;
  for (const name of others) expect(listed).toContain(`${name} holds 1`);

  const relayed = await run(cli, ['relay', ...flags, '--once', '--json']);
  expect(relayed.code, relayed.stderr).toBe(0);
  expect(relayed.json.find((l) => l.type === 'done')).toMatchObject({ recorded: 30, left: 0 });
  expect(list.filter((e) => cli.mock.store.usageEvent(e.event_key)?.quantity === 1)).toHaveLength(30);
});
