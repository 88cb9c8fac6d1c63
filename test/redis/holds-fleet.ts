import { describe, expect, it } from 'vitest';
import { type ActionRecord, mostHeldAtOnce } from '../credits/workload.js';
import type { ClientKind } from './clients.js';
import { uniquePrefix } from './connect.js';
import { ask, type Child, useFleet } from './processes.js';
import { type Target, useTargets } from './targets.js';

// The process tests of redisHoldStore, run by holds-processes.test.ts (one redis-server, node-redis)
// and holds-cluster.drill.test.ts (a Redis Cluster, node-redis's createCluster and ioredis's Cluster).

const PROCESSES = 3;
const ACTIONS = 40;
const BALANCE = 100;
const PRODUCT = 'ai-assistant';
const METER = 'credits';

/**
 * For the file: instances of one service in separate processes (holds-process.ts), each with its
 * own createCreditHolds on redisHoldStore, debiting the SDK's mock over HTTP on loopback (no stubs),
 * on each of `kinds`: together they never hold more than the account's balance, every settle debits
 * once, and the holds of a process killed (SIGKILL) while holding come back after their ttl, with
 * nothing debited for them.
 */
export function holdFleetTests(kinds: readonly ClientKind[]): void {
  const targets = useTargets(kinds);
  const fleet = useFleet('./holds-process.ts', 60_000);

  /** An account of its own on the mock, with `balance` credits. */
  function fundedAccount(name: string, balance = BALANCE): string {
    const account = `acct_${name}_${Math.random().toString(36).slice(2)}`;
    fleet.mock.store.addAccount({ account_ref_id: account, customer_email: `${account}@example.com` });
    fleet.mock.store.setBalance(account, PRODUCT, METER, balance);
    return account;
  }

  /** The mock's approved debits of `account` (its ledger, keyed by event_key). */
  const debitsOf = (account: string) =>
    [...fleet.mock.store.ledger.values()].filter((e) => e.account_ref_id === account);

  /** Starts the instances on `target`, sharing one fresh prefix. */
  function start(target: Target, count: number): Promise<Child[]> {
    return fleet.start(count, { ...target.env, PREFIX: uniquePrefix('holds-processes') });
  }

  describe.each(kinds)(`processes sharing redisHoldStore, %s`, (kind) => {
    it(`${PROCESSES} processes, ${ACTIONS} concurrent actions on one account of ${BALANCE}: never more held than the balance, each settle debited once`, async () => {
      const children = await start(targets(kind), PROCESSES);
      const account = fundedAccount(`workload_${kind}`);
      const shares = children.map(
        (_, i) => Math.floor(ACTIONS / PROCESSES) + (i < ACTIONS % PROCESSES ? 1 : 0),
      );
      const worked = await Promise.all(
        children.map((c, i) =>
          ask(
            c,
            { cmd: 'workload', account, count: shares[i], maxQuantity: 10, seed: 1_000 + i },
            'worked',
            60_000,
          ),
        ),
      );
      for (const w of worked) expect(w.error).toBeUndefined();
      const records = worked.flatMap((w) => w.records as ActionRecord[]);
      expect(records).toHaveLength(ACTIONS);
      const approved = records.filter((r) => r.approved);
      // The first wave asks for more than 100 (40 actions of 1–10): some are refused, some granted.
      expect(approved.length).toBeGreaterThan(0);
      expect(approved.length).toBeLessThan(ACTIONS);
      expect(mostHeldAtOnce(records)).toBeLessThanOrEqual(BALANCE);
      for (const r of approved) expect(r.debitApproved).toBe(true);
      const used = records.reduce((sum, r) => sum + r.used, 0);
      const debited = debitsOf(account).reduce((sum, e) => sum + e.body.debited, 0);
      expect(debited).toBe(used);
      expect(fleet.mock.store.balance(account, PRODUCT, METER)).toBe(BALANCE - used);
      for (const c of children) expect(c.messages.filter((m) => m.type === 'store-error')).toEqual([]);
    }, 90_000);

    it('a process SIGKILLed while it holds 3 × 30: another’s 90 is refused at once, granted once the holds expire, and nothing is debited for them', async () => {
      const [doomed, survivor] = (await start(targets(kind), 2)) as [Child, Child];
      const account = fundedAccount(`killed_${kind}`);
      const TTL = 3_000;
      const sent = Date.now();
      const killedHolds: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await ask(doomed, { cmd: 'reserve', account, quantity: 30, ttlMs: TTL }, 'reserved');
        expect(r).toMatchObject({ approved: true, available: BALANCE - 30 * (i + 1) });
        killedHolds.push(String(r.eventKey));
      }
      await doomed.kill('SIGKILL');

      const refused = await ask(survivor, { cmd: 'reserve', account, quantity: 90 }, 'reserved');
      expect(refused).toMatchObject({ approved: false, available: 10 });
      // A bounded poll: asked again every 100 ms until the killed process's holds have expired.
      let granted = refused;
      const deadline = Date.now() + TTL + 15_000;
      while (!granted.approved) {
        if (Date.now() > deadline)
          throw new Error(`90 not granted within ${TTL + 15_000} ms: ${JSON.stringify(granted)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        granted = await ask(survivor, { cmd: 'reserve', account, quantity: 90 }, 'reserved');
      }
      // Not before the holds' ttl (counted from before the first reservation was asked; a ms of rounding spared).
      expect(Date.now() - sent).toBeGreaterThanOrEqual(TTL - 1);
      expect(granted).toMatchObject({ approved: true, available: 10, stats: { expired: 3 } });

      const settled = await ask(survivor, { cmd: 'settle', hold: granted.hold, used: 90 }, 'settled');
      expect(settled.result).toMatchObject({ approved: true, debited: 90, remaining_balance: 10 });
      const debits = debitsOf(account);
      expect(debits.map((e) => e.event_key)).toEqual([granted.eventKey]);
      for (const key of killedHolds) expect(fleet.mock.store.ledger.has(key)).toBe(false);
      expect(fleet.mock.store.balance(account, PRODUCT, METER)).toBe(10);
    }, 60_000);
  });
}
