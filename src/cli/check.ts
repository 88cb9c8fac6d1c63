/** One line of `billing-sdk doctor`. */
export interface CheckResult {
  /** What was checked: `api key`, `base url`, `clock`, `spool`, … */
  check: string;
  /** Passed, failed, or `null` when it could not be checked (an earlier check failed). */
  ok: boolean | null;
  /** What was found, and when it failed, what to fix. */
  detail: string;
}

/** A passed check. */
export const pass = (check: string, detail: string): CheckResult => ({ check, ok: true, detail });
/** The result of a check that failed (a line of the report, not an exception: doctor goes on). */
export const failedCheck = (check: string, detail: string): CheckResult => ({ check, ok: false, detail });
/** A check left out, and why. */
export const skip = (check: string, detail: string): CheckResult => ({ check, ok: null, detail });
