import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildChild, type Child, spawnChild } from '../redis/processes.js';
import { event } from '../webhooks/event.js';
import { usePostgres } from './cluster.js';
import { uniqueTable } from './connect.js';

// Three receiver processes (two on node-postgres, one on postgres.js) on one transactional inbox.
// Each event's effect is a row in an app table WITHOUT a unique index on the event's id, written in
// onEvent's transaction: an event applied twice would show as two rows.

const CLAIM_TTL_MS = 1_000;
const ref = usePostgres();
const table = uniqueTable('inbox');
const appTable = uniqueTable('app');
let admin: pg.Pool;
let child: { file: string; remove(): void };
let receivers: { child: Child; url: string }[] = [];
const extra: Child[] = [];

async function startReceiver(driver: 'pg' | 'postgres', more: Record<string, string> = {}) {
  const c = spawnChild(child.file, {
    PG_URL: ref.cluster.url,
    DRIVER: driver,
    TABLE: table,
    APP_TABLE: appTable,
    CLAIM_TTL_MS: String(CLAIM_TTL_MS),
    EVENT_MS: '50',
    ...more,
  });
  const { port } = await c.next((m) => m.type === 'listening');
  return { child: c, url: `http://127.0.0.1:${port}/` };
}

beforeAll(async () => {
  admin = new pg.Pool({ connectionString: ref.cluster.url });
  admin.on('error', () => {});
  await admin.query(`CREATE TABLE ${appTable} (event_id text NOT NULL, pid int NOT NULL)`);
  child = await buildChild('../postgres/receiver-process.ts');
  receivers = await Promise.all([startReceiver('pg'), startReceiver('pg'), startReceiver('postgres')]);
}, 60_000);
afterAll(async () => {
  await Promise.all([...receivers.map((r) => r.child.kill()), ...extra.map((c) => c.kill())]);
  child?.remove();
  await admin?.end();
});

/** Rows of the app table per event id: the effect of each event, counted. */
async function effects(): Promise<Map<string, number[]>> {
  const rows = await admin.query<{ event_id: string; pid: number }>(`SELECT event_id, pid FROM ${appTable}`);
  const byId = new Map<string, number[]>();
  for (const { event_id, pid } of rows.rows) byId.set(event_id, [...(byId.get(event_id) ?? []), pid]);
  return byId;
}

const post = async (url: string, body: string) => {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await res.arrayBuffer();
  return res.status;
};

/** A sender that retries until 200, every 50 ms; returns every status it got, in order. */
async function deliver(url: string, body: string, ms = 15_000): Promise<number[]> {
  const statuses: number[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const status = await post(url, body).catch(() => 0);
    statuses.push(status);
    if (status === 200 || Date.now() > deadline) return statuses;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every event delivered to every receiver twice, all at once. */
const everywhereTwice = (body: string) =>
  receivers.flatMap((r) => [deliver(r.url, body), deliver(r.url, body)]);

describe('3 receiver processes on one postgresDedupeStore inbox', () => {
  it('20 events, each delivered to all three twice at once: each applied exactly once, all acknowledged', async () => {
    const events = Array.from({ length: 20 }, () => event());
    const answers = await Promise.all(events.flatMap((e) => everywhereTwice(JSON.stringify(e))));
    expect(answers.every((statuses) => statuses.at(-1) === 200)).toBe(true);
    // Before its 200, a delivery can only have been told the event is being processed elsewhere.
    expect(answers.flat().every((status) => status === 200 || status === 409)).toBe(true);
    const applied = await effects();
    for (const e of events) expect(applied.get(e.transaction_id)).toHaveLength(1);
  });

  it('a receiver SIGKILLed inside the event’s transaction: its write rolls back, another applies the event once', async () => {
    const doomed = await startReceiver('pg', { DOOMED: '1' });
    extra.push(doomed.child);
    const e = event();
    const body = JSON.stringify(e);
    const lost = post(doomed.url, body).catch((error: unknown) => error);
    await doomed.child.next((m) => m.type === 'inside' && m.id === e.transaction_id);
    // The same event reaches all three survivors twice while the doomed one holds it.
    const deliveries = everywhereTwice(body);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const pid = doomed.child.process.pid;
    await doomed.child.kill('SIGKILL');
    expect(await lost).toBeInstanceOf(Error); // the sender saw the connection drop
    const answers = await Promise.all(deliveries);
    expect(answers.every((statuses) => statuses.at(-1) === 200)).toBe(true);
    expect(answers.flat().every((status) => status === 200 || status === 409)).toBe(true);
    // Held while the doomed receiver lived, then until its claim expired: the first answers were 409.
    expect(answers.every((statuses) => statuses[0] === 409)).toBe(true);
    const applied = (await effects()).get(e.transaction_id);
    expect(applied).toHaveLength(1);
    expect(applied?.[0]).not.toBe(pid);
  });

  it('over the whole run, the app table holds one row per event, never two', async () => {
    const rows = await admin.query<{ n: string; ids: string }>(
      `SELECT count(*) AS n, count(DISTINCT event_id) AS ids FROM ${appTable}`,
    );
    expect(rows.rows[0]?.n).toBe(rows.rows[0]?.ids);
    expect(Number(rows.rows[0]?.n)).toBe(21);
  });
});
