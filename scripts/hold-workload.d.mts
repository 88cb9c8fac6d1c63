// Declarations of hold-workload.mjs: the credit-holds workload's actions, shared by tests and bench.

/** One action of the workload. */
export interface HoldPlan {
  /** What it reserves: 1 to the workload's most. */
  quantity: number;
  /** The share of `quantity` it uses, in [0, 1). */
  useShare: number;
  /** How long it "runs", in ms (5–40). */
  runMs: number;
}

/** `count` actions from `seed`: each reserves 1–`maxQuantity`, runs 5–40 ms, then uses a share of it. */
export declare function holdPlans(count: number, maxQuantity: number, seed: number): HoldPlan[];

/** What a plan uses of its reservation: an integer from 0 to `quantity`. */
export declare function usedOf(plan: HoldPlan): number;
