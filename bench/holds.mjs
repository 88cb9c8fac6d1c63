// Credit holds (issue 37): an action as reserve + settle vs as one `usage.debit`, per hold store
// (memory, redisHoldStore, postgresHoldStore), against the mock in this process (its request log counts
// what reached the service); then the process tests' workload done with the debit-after pattern vs holds:
// the credits used that could not be charged.
import { BillingClient, createCreditHolds } from 'billing-sdk';
import { postgresHoldStore } from 'billing-sdk/postgres';
import { redisHoldStore } from 'billing-sdk/redis';
import pg from 'pg';
import { createClient } from 'redis';
import { holdPlans, usedOf } from '../scripts/hold-workload.mjs';
import { startPostgres, startRedisServer } from '../scripts/servers.mjs';
import { goal, quantile, r3, sleep, startMock } from './lib.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'Credit holds';
export const how =
  "The mock in this process; redis-server (node-redis) and PostgreSQL (pg) of the run's own (`scripts/servers.mjs`). Per store, on fresh accounts: 100 warm-up actions of each, then 300 actions one at a time, reserve 10 + settle 3 and one `usage.debit` of 3 alternating, each timed; requests counted in the mock's log. Contrast: the process tests' workload (scripts/hold-workload.mjs: 40 concurrent actions of 1–10, 5–40 ms each, a random use of 0–quantity, balance 100, seeds 1000–1019) done with holds (memory store) and with debit-after (read the balance, act when it covers the quantity, debit the use after).";

const LEDGER = { product_code: 'ai-assistant', meter_code: 'credits' };
const ACTIONS = 300;
const WARMUP = 100;
const ROUNDS = 20;
const sorted = (xs) => [...xs].sort((a, b) => a - b);

/** A fresh account on the mock with `balance` credits. */
function funded(mock, name, balance) {
  const account = `acct_${name}_${Math.random().toString(36).slice(2, 8)}`;
  mock.store.addAccount({ account_ref_id: account, customer_email: `${account}@example.com` });
  mock.store.setBalance(account, LEDGER.product_code, LEDGER.meter_code, balance);
  return { account_ref_id: account, ...LEDGER };
}

/** The mock's requests about `account` (balance reads carry it in the query, debits in the body). */
const requestsOf = (mock, account) =>
  mock.requests.count((r) => r.query.account_ref_id === account || r.body?.account_ref_id === account);

/** Reserve 10, settle 3 (must be granted and debited) and one debit of 3, on `store`, one at a time. */
async function perAction(mock, billing, store) {
  const holds = createCreditHolds(billing, { store });
  const held = async (ledger) => {
    const r = await holds.reserve({ ...ledger, quantity: 10 });
    if (!r.approved || !(await r.hold.settle(3)).approved) throw new Error('hold refused');
  };
  const debit = async (ledger) => {
    if (!(await billing.usage.debit({ ...ledger, quantity: 3 })).approved) throw new Error('debit refused');
  };
  const warm = [funded(mock, 'warm_h', 1e9), funded(mock, 'warm_d', 1e9)];
  for (let i = 0; i < WARMUP; i++) {
    await held(warm[0]);
    await debit(warm[1]);
  }
  const ledgers = { held: funded(mock, 'held', 1e9), debit: funded(mock, 'debit', 1e9) };
  const runs = { held, debit };
  const times = { held: [], debit: [] };
  const first = {};
  for (let i = 0; i < ACTIONS; i++) {
    // Alternating, so that a busy moment of the machine slows both alike.
    for (const kind of i % 2 ? ['debit', 'held'] : ['held', 'debit']) {
      const t0 = performance.now();
      await runs[kind](ledgers[kind]);
      times[kind].push(performance.now() - t0);
      if (i === 0) first[kind] = requestsOf(mock, ledgers[kind].account_ref_id);
    }
  }
  const requests = (kind) => requestsOf(mock, ledgers[kind].account_ref_id);
  return {
    first,
    later: { held: requests('held') - first.held, debit: requests('debit') - first.debit },
    latency: ['p50', 'p99']
      .map((p) => {
        const q = Number(p.slice(1)) / 100;
        const [h, d] = [times.held, times.debit].map((t) => r3(quantile(sorted(t), q)));
        return `${p} ${h} / ${d} ms`;
      })
      .join(', '),
    balanceReads: holds.stats().balanceReads,
  };
}

/**
 * One round: 40 concurrent actions on a fresh account of 100. `start(ledger, quantity)` says whether
 * the action may run and returns its `charge(used)`, which resolves to whether the debit went through.
 */
async function round(mock, seed, start) {
  const ledger = funded(mock, 'workload', 100);
  const out = { done: 0, refused: 0, charged: 0, givenAway: 0, refusedDebits: 0 };
  await Promise.all(
    holdPlans(40, 10, seed).map(async (plan) => {
      const { quantity, runMs } = plan;
      const charge = await start(ledger, quantity);
      if (!charge) return void out.refused++;
      await sleep(runMs);
      const used = usedOf(plan);
      out.done++;
      if (await charge(used)) out.charged += used;
      else Object.assign(out, { givenAway: out.givenAway + used, refusedDebits: out.refusedDebits + 1 });
    }),
  );
  return out;
}

/** The workload with holds (memory store) and with debit-after, ROUNDS seeds each, summed. */
async function contrast(mock, billing) {
  const holds = createCreditHolds(billing);
  const patterns = {
    holds: async (ledger, quantity) => {
      const r = await holds.reserve({ ...ledger, quantity });
      return r.approved && (async (used) => (await r.hold.settle(used)).approved);
    },
    'debit-after': async (ledger, quantity) => {
      const { balance } = await billing.usage.balance(ledger);
      return (
        balance >= quantity &&
        (async (used) => used === 0 || (await billing.usage.debit({ ...ledger, quantity: used })).approved)
      );
    },
  };
  const totals = {};
  for (const [name, start] of Object.entries(patterns)) {
    const sum = { done: 0, refused: 0, charged: 0, givenAway: 0, refusedDebits: 0, roundsGivingAway: 0 };
    for (let i = 0; i < ROUNDS; i++) {
      const r = await round(mock, 1000 + i, start);
      for (const k of Object.keys(r)) sum[k] += r[k];
      if (r.givenAway > 0) sum.roundsGivingAway++;
    }
    totals[name] = sum;
  }
  return totals;
}

/** Runs the scenario: its goals first, then the figures behind them. */
export async function run() {
  const mock = await startMock();
  const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl, logLevel: 'off' });
  const redis = await startRedisServer();
  const postgresServer = await startPostgres();
  const client = createClient({ url: redis.url });
  client.on('error', () => {});
  await client.connect();
  const pool = new pg.Pool({ connectionString: postgresServer.url, max: 4 });
  pool.on('error', () => {});
  const stores = {
    memory: undefined,
    redisHoldStore: redisHoldStore(client, { prefix: 'bench:holds:' }),
    postgresHoldStore: postgresHoldStore(pool, { table: 'bench_holds' }),
  };
  const perStore = {};
  for (const [name, store] of Object.entries(stores)) perStore[name] = await perAction(mock, billing, store);
  const workload = await contrast(mock, billing);
  await client.close?.();
  await pool.end();
  await Promise.all([redis.stop(), postgresServer.stop(), mock.close()]);

  const rows = Object.entries(perStore);
  const goals = [
    goal(
      `requests to the service per action (${ACTIONS} actions, one at a time)`,
      `reserve + settle: ${rows.map(([name, s]) => `${name} ${s.first.held} for the first, then ${r3(s.later.held / (ACTIONS - 1))}`).join('; ')}; one debit: ${[...new Set(rows.flatMap(([, s]) => [s.first.debit, r3(s.later.debit / (ACTIONS - 1))]))].join(', ')} each`,
      '1 per action after the first (the settle’s debit)',
      rows.every(([, s]) => s.later.held === ACTIONS - 1),
    ),
    goal(
      `latency per action, ${ACTIONS} one at a time: reserve + settle / one debit`,
      rows.map(([name, s]) => `${name}: ${s.latency}`).join('; '),
      '',
      null,
    ),
  ];
  const { holds, 'debit-after': after } = workload;
  const line = (w) =>
    `${w.givenAway} credits in ${w.refusedDebits} refused debits (${w.roundsGivingAway} of ${ROUNDS} rounds); ${w.done} actions run, ${w.refused} refused up front, ${w.charged} charged`;
  goals.push(
    goal(
      `40 concurrent actions of 1–10 on a balance of 100, ${ROUNDS} rounds: used but not charged, debit-after`,
      line(after),
      '',
      null,
    ),
    goal('the same with holds (memory store)', line(holds), '0 credits', holds.givenAway === 0),
  );
  return { goals, perStore, workload };
}
