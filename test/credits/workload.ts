import { holdPlans, usedOf } from '../../scripts/hold-workload.mjs';
import type { CreditHolds } from '../../src/index.js';

/** One action of {@link runHoldWorkload}: what was reserved, when, and what it used. */
export interface ActionRecord {
  /** The reservation's quantity. */
  quantity: number;
  approved: boolean;
  /** What its settle debited (0 when refused). */
  used: number;
  /** The debit's answer was approved (settles of 0 count as approved). */
  debitApproved: boolean;
  /** Date.now() after the grant resolved: the hold surely counted from then… */
  heldFrom: number;
  /** …until Date.now() before its settle began. */
  heldUntil: number;
}

/**
 * `count` concurrent actions on one ledger: each reserves 1–`maxQuantity`, "runs" for 5–40 ms, then
 * settles a random use of 0–quantity. Used by the process tests of every hold store, on the same terms.
 */
export async function runHoldWorkload(
  holds: CreditHolds,
  ledger: { account_ref_id: string; product_code: string; meter_code: string },
  count: number,
  maxQuantity: number,
  seed: number,
  ttlMs = 60_000,
): Promise<ActionRecord[]> {
  return Promise.all(
    holdPlans(count, maxQuantity, seed).map(async (plan): Promise<ActionRecord> => {
      const { quantity, runMs } = plan;
      const r = await holds.reserve({ ...ledger, quantity, ttlMs });
      if (!r.approved)
        return { quantity, approved: false, used: 0, debitApproved: false, heldFrom: 0, heldUntil: 0 };
      const heldFrom = Date.now();
      await new Promise((resolve) => setTimeout(resolve, runMs));
      const used = usedOf(plan);
      const heldUntil = Date.now();
      const debit = await r.hold.settle(used);
      return { quantity, approved: true, used, debitApproved: debit.approved, heldFrom, heldUntil };
    }),
  );
}

/**
 * The most credits surely held at one instant across `records` (of every process): each hold is
 * counted only from its grant's answer to its settle's start, inside the span it truly held, so a
 * sum above the balance proves an overcommitment (a sum within it is what holds promise).
 */
export function mostHeldAtOnce(records: readonly ActionRecord[]): number {
  const edges: [number, number][] = [];
  for (const r of records) {
    if (!r.approved || r.heldUntil <= r.heldFrom) continue;
    edges.push([r.heldFrom, r.quantity], [r.heldUntil, -r.quantity]);
  }
  // Ends before starts at the same ms: touching spans do not overlap.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let held = 0;
  let most = 0;
  for (const [, delta] of edges) {
    held += delta;
    most = Math.max(most, held);
  }
  return most;
}
