import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type ActionRecord, mostHeldAtOnce } from '../credits/workload.js';
import { ask, type Child, useFleet, waitUntil } from '../redis/processes.js';
import { usePostgres } from './cluster.js';
import { uniqueTable } from './connect.js';

// Instances of a service (two on node-postgres, one on postgres.js) reserve credits of one account
// through createCreditHolds on one postgresHoldStore, against the mock: together they never hold
// more than the balance, and the holds of one SIGKILLed midway count until their ttl, no longer.

const cluster = usePostgres();
const fleet = useFleet('../postgres/holds-process.ts', 60_000);
const PRODUCT = 'ai-assistant';
const METER = 'credits';

/** An account of the scenario's own on the mock, its balance `balance`. */
function newAccount(balance: number): string {
  const account = `acct_holds_${randomUUID().slice(0, 8)}`;
  fleet.mock.store.addAccount({ account_ref_id: account, customer_email: `${account}@example.com` });
  fleet.mock.store.setBalance(account, PRODUCT, METER, balance);
  return account;
}

/** The mock's approved debits of `account`. */
const debitsOf = (account: string) =>
  [...fleet.mock.store.ledger.values()].filter((d) => d.account_ref_id === account);

/** `count` children on the table, for `account`: the second on postgres.js, the others on node-postgres. */
function spawn(count: number, table: string, account: string): Child[] {
  return Array.from({ length: count }, (_, i) =>
    fleet.spawn({
      PG_URL: cluster.cluster.url,
      TABLE: table,
      ACCOUNT: account,
      DRIVER: i === 1 ? 'postgres.js' : 'pg',
    }),
  );
}
const ready = (children: Child[]) =>
  Promise.all(children.map((c) => c.next((m) => m.type === 'ready', 20_000)));
const noFailures = (children: Child[]) => {
  for (const c of children) expect(c.messages.filter((m) => m.type === 'failed')).toEqual([]);
};

describe('3 processes reserving credits of one account on one postgresHoldStore', () => {
  it('40 actions with holds of up to 10 on a balance of 100: never more than 100 held at once, every debit approved, the ledger agrees', async () => {
    const account = newAccount(100);
    const children = spawn(3, uniqueTable('holds'), account);
    await ready(children);
    const shares = [14, 13, 13];
    const answers = await Promise.all(
      children.map((c, i) =>
        ask(c, { cmd: 'workload', count: shares[i], maxQuantity: 10, seed: 1_000 + i }, 'records', 60_000),
      ),
    );
    noFailures(children);
    const all = answers.flatMap((a) => a.records as ActionRecord[]);
    expect(all).toHaveLength(40);
    expect(all.filter((r) => r.approved).length).toBeGreaterThan(0);
    // Some had to be refused: the processes really competed for the balance.
    expect(all.filter((r) => !r.approved).length).toBeGreaterThan(0);
    expect(mostHeldAtOnce(all)).toBeLessThanOrEqual(100);
    expect(all.filter((r) => r.approved && !r.debitApproved)).toEqual([]);
    const used = all.reduce((sum, r) => sum + r.used, 0);
    expect(debitsOf(account).reduce((sum, d) => sum + d.body.debited, 0)).toBe(used);
    expect(fleet.mock.store.balance(account, PRODUCT, METER)).toBe(100 - used);
  }, 120_000);

  it('the holds of a process SIGKILLed while it holds them count until their ttl, then free the credits; nothing is debited for them', async () => {
    const TTL_MS = 1_500;
    const account = newAccount(100);
    const [doomed, survivor] = spawn(2, uniqueTable('killed'), account) as [Child, Child];
    await ready([doomed, survivor]);
    const sentAt = Date.now();
    const held = await ask(doomed, { cmd: 'reserve', quantity: 30, ttlMs: TTL_MS, times: 3 }, 'reserved');
    expect(held.results).toEqual([
      { approved: true, available: 70 },
      { approved: true, available: 40 },
      { approved: true, available: 10 },
    ]);
    await doomed.kill('SIGKILL');

    const reserve90 = async () =>
      (
        (await ask(survivor, { cmd: 'reserve', quantity: 90, ttlMs: 60_000, times: 1 }, 'reserved'))
          .results as {
          approved: boolean;
          available: number;
        }[]
      )[0]!;
    // At once: the dead process's 90 still count.
    expect(await reserve90()).toEqual({ approved: false, available: 10 });
    // Then, polled: granted once they expired, by the database's clock, not before their ttl.
    let grantedAt = 0;
    await waitUntil(
      'the 90 granted',
      async () => {
        if (!(await reserve90()).approved) return false;
        grantedAt = Date.now();
        return true;
      },
      () => survivor.messages.at(-1),
      20_000,
    );
    expect(grantedAt - sentAt).toBeGreaterThanOrEqual(TTL_MS);

    const { debits } = await ask(survivor, { cmd: 'settle' }, 'settled');
    noFailures([doomed, survivor]);
    // The only debit of the account is the survivor's: none for the dead process's holds.
    const [settled] = debits as { event_key: string; approved: boolean; debited: number }[];
    expect(settled).toMatchObject({ approved: true, debited: 90 });
    expect(debitsOf(account).map((d) => [d.event_key, d.body.debited])).toEqual([[settled!.event_key, 90]]);
    expect(fleet.mock.store.balance(account, PRODUCT, METER)).toBe(10);
  }, 120_000);
});
