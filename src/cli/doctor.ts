import type { SpoolFlags } from './args.js';
import type { CheckResult } from './check.js';
import { serviceChecks } from './doctor-service.js';
import { spoolChecks } from './doctor-spool.js';
import type { Printer } from './printer.js';

const MARK = { true: 'ok  ', false: 'FAIL', null: '-   ' } as const;

/**
 * `billing-sdk doctor`: the service's checks, then the spool's when its flags are given; one line
 * per check (`--json`: one object with every check). Resolves with the exit code: 1 when any
 * check failed, else 0.
 */
export async function doctor(spool: SpoolFlags | undefined, printer: Printer): Promise<number> {
  const checks: CheckResult[] = [...(await serviceChecks()), ...(spool ? await spoolChecks(spool) : [])];
  const ok = checks.every((c) => c.ok !== false);
  if (printer.json) {
    printer.data({ ok, checks });
  } else {
    const width = Math.max(...checks.map((c) => c.check.length));
    for (const c of checks)
      printer.text(`${MARK[String(c.ok) as keyof typeof MARK]}  ${c.check.padEnd(width)}  ${c.detail}`);
  }
  return ok ? 0 : 1;
}
