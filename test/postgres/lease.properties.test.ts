import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpoolError } from '../../src/core/errors/index.js';
import { postgresSpool } from '../../src/postgres/index.js';
import type { Spool } from '../../src/tracker/spool.js';
import { spooledEvent } from '../tracker/spool-contract.js';
import { usePostgres } from './cluster.js';

// Claims and leases of postgresSpool, against a small model, on the real SQL: fast-check runs
// random interleavings of three relays appending, claiming, acknowledging, replacing, having their
// leases expire (as a relay frozen past claimTtlMs: its rows' lease_until set in the past) and
// restarting (close gives back what it held). After every step the spool must hand exactly what the
// model says: the oldest rows no live lease holds, never a row twice to the same relay while it
// holds it, never a row held by another live relay; and pending/size must agree with the model.

const RELAYS = 3;
const cluster = usePostgres();
let pool: pg.Pool;
beforeAll(() => {
  pool = new pg.Pool({ connectionString: cluster.cluster.url, max: 10 });
  // node-postgres asks every pool for one: an idle client whose connection ends (a test kills
  // backends, the cluster stops at the end) is an 'error' event of the pool, unheard a crash.
  pool.on('error', () => {});
});
afterAll(() => pool?.end());

interface Row {
  id: string;
  acked: boolean;
  /** The relay whose claim it was last, or null. */
  owner: number | null;
  /** Whether that claim's lease holds. */
  live: boolean;
}

interface Model {
  rows: Row[];
  /** Per relay: what it was handed and has not acknowledged nor replaced (its spool's `held`). */
  held: Set<string>[];
}

interface Real {
  table: string;
  spools: Spool[];
  consumers: string[];
}

let runs = 0;
let consumerCount = 0;
const newConsumer = () => `relay-${++consumerCount}`;

async function openSpool(real: Real, relay: number): Promise<void> {
  const consumer = newConsumer();
  // A stable name only so the test can expire this relay's leases by it: a restart gets a new one.
  const spool = postgresSpool(pool, { table: real.table, consumer, claimTtlMs: 60_000, pollMs: 60_000 });
  await spool.open();
  real.spools[relay] = spool;
  real.consumers[relay] = consumer;
}

const claimable = (row: Row) => !row.acked && (row.owner === null || !row.live);

/** After every command: pending and size as the model says. */
async function invariants(model: Model, real: Real): Promise<void> {
  const spool = real.spools[0] as Spool;
  const ids = model.rows.map((r) => r.id);
  expect(await spool.pending(ids)).toEqual(model.rows.filter((r) => !r.acked).map((r) => r.id));
  expect(await spool.size?.()).toBe(model.rows.filter(claimable).length);
}

class Append implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly relay: number,
    readonly count: number,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const ids = await (real.spools[this.relay] as Spool).append(
      Array.from({ length: this.count }, (_, i) => spooledEvent(i)),
    );
    for (const id of ids) model.rows.push({ id, acked: false, owner: null, live: false });
    await invariants(model, real);
  }
  toString = () => `append(${this.relay}, ${this.count})`;
}

class Take implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly relay: number,
    readonly max: number,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const claimed = model.rows.filter(claimable).slice(0, this.max);
    const held = model.held[this.relay] as Set<string>;
    const expected = claimed.filter((r) => !held.has(r.id)).map((r) => r.id);
    for (const row of claimed) Object.assign(row, { owner: this.relay, live: true });
    for (const id of expected) held.add(id);
    const taken = await (real.spools[this.relay] as Spool).take(this.max);
    expect(taken.map((e) => e.id)).toEqual(expected);
    // Never a row another relay holds under a live lease.
    for (const [other, set] of model.held.entries())
      if (other !== this.relay)
        for (const id of expected) expect(set.has(id) && liveOwner(model, id) === other).toBe(false);
    await invariants(model, real);
  }
  toString = () => `take(${this.relay}, ${this.max})`;
}

const liveOwner = (model: Model, id: string) => {
  const row = model.rows.find((r) => r.id === id);
  return row?.live ? row.owner : null;
};

/** Picks members among what `relay` holds (by the given indexes), in id order. */
function pick(model: Model, relay: number, picks: number[]): string[] {
  const held = [...(model.held[relay] as Set<string>)];
  if (!held.length) return [];
  return [...new Set(picks.map((i) => held[i % held.length] as string))];
}

class Ack implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly relay: number,
    readonly picks: number[],
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const ids = pick(model, this.relay, this.picks);
    for (const id of ids) {
      (model.held[this.relay] as Set<string>).delete(id);
      const row = model.rows.find((r) => r.id === id) as Row;
      row.acked = true;
    }
    await (real.spools[this.relay] as Spool).ack(ids);
    await invariants(model, real);
  }
  toString = () => `ack(${this.relay}, [${this.picks}])`;
}

class Replace implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly relay: number,
    readonly picks: number[],
    readonly withUnheld: boolean,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const members = pick(model, this.relay, this.picks);
    // Sometimes a row this relay was never handed: allowed unless another live lease holds it.
    const other = model.rows.find((r) => !r.acked && !(model.held[this.relay] as Set<string>).has(r.id));
    if (this.withUnheld && other) members.push(other.id);
    if (!members.length) return;
    const rows = members.map((id) => model.rows.find((r) => r.id === id) as Row);
    const conflict = rows.some((r) => r.acked || (r.live && r.owner !== null && r.owner !== this.relay));
    const result = await (real.spools[this.relay] as Spool)
      .replace(members, spooledEvent(99))
      .then((id) => ({ id }))
      .catch((error: unknown) => ({ error }));
    if (conflict) {
      expect('error' in result && result.error instanceof SpoolError && result.error.code).toBe('conflict');
    } else {
      expect('id' in result).toBe(true);
      for (const row of rows) row.acked = true;
      model.rows.push({ id: (result as { id: string }).id, acked: false, owner: null, live: false });
    }
    // The spool forgets the members either way (a later take may hand them again if they are still there).
    for (const id of members) (model.held[this.relay] as Set<string>).delete(id);
    await invariants(model, real);
  }
  toString = () => `replace(${this.relay}, [${this.picks}], ${this.withUnheld})`;
}

class Expire implements fc.AsyncCommand<Model, Real> {
  constructor(readonly relay: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    await pool.query(
      `UPDATE "${real.table}" SET lease_until = now() - interval '1 millisecond' WHERE claimed_by = $1`,
      [real.consumers[this.relay]],
    );
    for (const row of model.rows) if (row.owner === this.relay) row.live = false;
    await invariants(model, real);
  }
  toString = () => `expire(${this.relay})`;
}

class Restart implements fc.AsyncCommand<Model, Real> {
  constructor(readonly relay: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    await (real.spools[this.relay] as Spool).close();
    for (const row of model.rows)
      if (row.owner === this.relay && !row.acked && (model.held[this.relay] as Set<string>).has(row.id))
        Object.assign(row, { owner: null, live: false });
    for (const row of model.rows) if (row.owner === this.relay) row.owner = -1; // a name no relay has now
    model.held[this.relay] = new Set();
    await openSpool(real, this.relay);
    await invariants(model, real);
  }
  toString = () => `restart(${this.relay})`;
}

const relay = fc.integer({ min: 0, max: RELAYS - 1 });
const picks = fc.array(fc.nat(20), { minLength: 1, maxLength: 4 });
const commands = [
  fc.tuple(relay, fc.integer({ min: 1, max: 4 })).map(([r, n]) => new Append(r, n)),
  fc.tuple(relay, fc.integer({ min: 1, max: 5 })).map(([r, n]) => new Take(r, n)),
  fc.tuple(relay, picks).map(([r, p]) => new Ack(r, p)),
  fc.tuple(relay, picks, fc.boolean()).map(([r, p, u]) => new Replace(r, p, u)),
  relay.map((r) => new Expire(r)),
  relay.map((r) => new Restart(r)),
];

describe('postgresSpool claims and leases (real SQL against a model)', () => {
  it('hands exactly what the model says, whatever the interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 25 }), async (cmds) => {
        const real: Real = { table: `lease_prop_${++runs}`, spools: [], consumers: [] };
        const model: Model = { rows: [], held: Array.from({ length: RELAYS }, () => new Set<string>()) };
        for (let i = 0; i < RELAYS; i++) await openSpool(real, i);
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
        } finally {
          for (const spool of real.spools) await spool.close();
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
