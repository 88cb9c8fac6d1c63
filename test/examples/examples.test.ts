import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// Every program in examples/ runs against the embedded mock (npm test builds the package first).
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const env = { ...process.env, BILLING_BASE_URL: '', BILLING_API_KEY: '' };

/** What each example must print: proof that it did its job, not only that it exited. */
const expected: Record<string, RegExp[]> = {
  'demo.mjs': [
    /isActive\(acct_active\)\s+true/,
    /response lost after commit\s+retried with the same key: 970 left/,
    /Done:/,
  ],
  'paywall-hono.mjs': [
    /→ 302 http:\/\/127\.0\.0\.1:\d+\/t\/tu_pro_plan_pro\?u=ey/,
    /hosted page → 200 for account acct_new/,
  ],
  'gate-express.mjs': [
    /no session:\n\s+GET \/reports → 401 application\/problem\+json \{"type":"urn:billing-sdk:problem:unauthenticated"/,
    /GET \/reports → 402 application\/problem\+json .*"reason":"inactive".*"upgrade_url":"http:\/\/127\.0\.0\.1:\d+\/t\/tu_pro_plan_pro\?u=ey/,
    /from a browser:\n\s+GET \/reports → 303 http:\/\/127\.0\.0\.1:\d+\/t\/tu_pro_plan_pro\?u=ey/,
    /the hosted page verifies the link: account acct_past_due/,
    /the same key again \(its answer lost\):\n\s+POST \/summaries → 422 .*"reason":"idempotency_key_used".*\n\s+balance 995: the key was used once, charged once, the work done once/,
    /POST \/summaries → 402 .*"reason":"insufficient_credits".*"remaining_balance":995/,
    /"reason":"not_entitled".*\n\s+debit requests sent for it: 0/,
  ],
  'gate-hono.mjs': [
    /GET \/api\/search\/broken → 500 .*\n\s+usage events recorded: 1 \(the 500 was not billed\)/,
    /GET \/api\/search → 402 .*"reason":"inactive"/,
    /POST \/api\/summaries → 200 \{"summary":"…","remaining_balance":990\}/,
    /'closed' \(the default\):\n\s+GET \/api\/search → 503 \(Retry-After: \d+\) .*"reason":"unavailable"/,
    /'open':\n\s+GET \/api\/search → 200 \{"results":3,"source":"fallback"\}\n\s+POST \/api\/summaries → 503 /,
  ],
  'credit-holds.mjs': [
    /^ran: \d+ tokens charged\nran: \d+ tokens charged\nrefused: 200 available$/m,
    /^balance 799: charged what was used \(201\), not what was held$/m,
    /settled: 2,\n\s+unpaid: 0,\n\s+released: 0,\n\s+expired: 0,\n\s+balanceReads: 1,\n\s+open: 0/,
  ],
  'invoice-report.mjs': [/^45 invoices for acct_active$/m, /^paid\s+usd\s+25\b/m],
  'webhook-receiver-express.mjs': [
    /receiver: payment-failed for acct_active: access revoked/,
    /receiver: payment-succeeded for acct_active: access granted/,
    /answered 200, onEvent not run again/,
  ],
  'bulk-usage.mjs': [
    /first run: \d+ recorded, \d+ left/,
    /second run: all 2000 ok, \d+ were already recorded/,
    /usage added: 3999 \(the log holds 3999\): exactly once/,
  ],
  'access-cache.mjs': [
    /2000 checks in [\d.]+ ms: 2 requests reached the service/,
    /webhook payment-failed: acct_active is not active\n\s+isActive\(acct_active\) false/,
    /webhook payment-succeeded: acct_active is active\n\s+isActive\(acct_active\) true/,
  ],
  'usage-tracker.mjs': [
    /tracked 500 events in \d+ ms/,
    /first run stopped: \d+ recorded, \d+ left in the spool/,
    /dead letter: ai-assistant\/credits invalid_usage_model/,
    /second run: sent the \d+ left first/,
    /usage added: 3999 \(tracked 3999 in 3500 events\): exactly once/,
  ],
  'serverless-edge.mjs': [
    /Worker: GET \/api\/search → 200, usage recorded so far: 0\n\s+once ctx\.waitUntil's promises settled: usage recorded 1/,
    /Function: after its waitUntil settled, usage recorded 2/,
    /Writer: 3 events in the spool, 0 sent, unsent 0/,
    /Relay: usage recorded 5: each event once/,
  ],
  'account-view.mjs': [
    /^Export locked, Upgrade: http:\/\/127\.0\.0\.1:\d+\/t\/tu_pro_plan_pro\?u=ey/m,
    /^paid in another tab: Export unlocked in \d+ ms, no reload$/m,
  ],
  'ai-chat-hono.mjs': [
    /^1\. a whole answer:\n {2}POST \/chat → 200, 202 characters read, completed\n {2}charged 27 credits for 7 input \+ 51 output tokens: balance 1000 → 973$/m,
    // Charged part of the whole answer's 27, on an estimate of the text sent before the client left.
    /^2\. the client leaves after 40 characters:\n {2}POST \/chat → 200, \d+ characters read, cancelled\n {2}charged ([1-9]|1\d|2[0-6]) credits for \d+ input \+ \d+ output tokens \(estimated\): balance 973 → \d+$/m,
    /^ {2}debits under its key: 1 \(never free, never charged twice\)$/m,
    /^ {2}POST \/chat → 402 \{"error":"insufficient_credits","required":51,"available":0\}\n {2}LLM calls in all: 2 /m,
  ],
  'metering.mjs': [/job-2: \{ ran: false, reason: 'insufficient_credits'/, /credits left: 960/],
  'opentelemetry.mjs': [
    /^invoices\.list \[INTERNAL OK\] .*billing_sdk\.retry_count=1 http\.response\.status_code=200$/m,
    /^ {2}GET \/api\/invoices\/ \[CLIENT ERROR\] .*http\.response\.status_code=503 error\.type=InternalServerError$/m,
    /^ {2}GET \/api\/invoices\/ \[CLIENT OK\] http\.request\.resend_count=1 .*http\.response\.status_code=200$/m,
    /^accounts\.status \[INTERNAL ERROR\] .*http\.response\.status_code=404 error\.type=NotFoundError$/m,
    /^http\.client\.request\.duration count=1 http\.request\.method=GET url\.template=\/api\/invoices\/ http\.response\.status_code=503 /m,
    /^billing_sdk\.access\.lookups 2 billing_sdk\.access\.result=hit billing_sdk\.operation=accounts\.status$/m,
    /^billing_sdk\.tracker\.events 3 billing_sdk\.tracker\.event=sent$/m,
    /^billing_sdk\.tracker\.queue_depth 0$/m,
    /^(?![\s\S]*acct_)/, // no account id in any span or metric printed
  ],
};

/** Examples that need more than the mock, and the test that runs them there. */
const elsewhere: Record<string, string> = {
  'postgres-outbox.mjs': 'test/postgres/example.test.ts (a PostgreSQL of its own)',
};

describe('examples/', () => {
  const programs = readdirSync(`${root}examples`)
    .filter((f) => f.endsWith('.mjs'))
    .filter((f) => !(f in elsewhere));

  it('the examples run elsewhere exist, and their tests too', () => {
    for (const [program, where] of Object.entries(elsewhere)) {
      expect(existsSync(`${root}examples/${program}`), program).toBe(true);
      expect(existsSync(`${root}${where.split(' ')[0]}`), where).toBe(true);
    }
  });

  it('every example has expectations here', () => {
    expect(programs.sort()).toEqual(Object.keys(expected).sort());
  });

  // A whole program per test (bulk-usage.mjs sends 3,500 events, about 7 s alone; 30 s was seen run
  // out on a loaded 2-core runner): the child gets 60 s, and the test as long, so a slow run fails with the child's own error and output rather than vitest's timeout.
  // Each program is its own process with its own mock on an ephemeral port: 5 at a time (vitest's maxConcurrency), so this
  // file (about 50 s one after another) is not the last one `npm test` waits for.
  it.concurrent.each(programs)(
    '%s runs against the mock',
    async (program) => {
      const { stdout } = await run(process.execPath, [`examples/${program}`], {
        cwd: root,
        env,
        timeout: 60_000,
      });
      for (const pattern of expected[program] ?? []) expect(stdout).toMatch(pattern);
    },
    65_000,
  );
});
