// `billing-sdk relay --redis <url> --cluster` and `doctor` on a Redis Cluster (3 masters, 3
// replicas): the URL of one node is enough; every event of a stream is sent once.
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redisSpool } from '../../src/redis/index.js';
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

  const doctor = await run(cli, ['doctor', ...flags, '--json']);
  expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
  const checks = doctor.json[0]?.checks as { check: string; detail: string }[];
  expect(checks.find((c) => c.check === 'backlog')?.detail).toMatch(/^30 events waiting/);

  const relayed = await run(cli, ['relay', ...flags, '--once', '--json']);
  expect(relayed.code, relayed.stderr).toBe(0);
  expect(relayed.json.find((l) => l.type === 'done')).toMatchObject({ recorded: 30, left: 0 });
  expect(list.filter((e) => cli.mock.store.usageEvent(e.event_key)?.quantity === 1)).toHaveLength(30);
});
