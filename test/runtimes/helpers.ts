import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { verifyHostedLink } from '../../src/index.js';
import type { MockServer, MockServerOptions, WebhookDelivery } from '../../src/testing/index.js';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const ACCOUNT = 'acct_active';

/**
 * The mock as every runtime test starts it. Webhook tries are bounded so that a receiver that hangs
 * fails the test with the mock's delivery log well within the test's timeout.
 */
export const MOCK_OPTIONS: MockServerOptions = { webhookRetry: { attempts: 3, timeoutMs: 3_000 } };

/**
 * The runtime binary of a devDependency. A missing one is a broken install, not an optional extra:
 * fail (never skip), naming the package to reinstall.
 */
export function runtimeBinary(pkg: 'deno' | 'bun'): string {
  const path = `${repoRoot}node_modules/.bin/${pkg}`;
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: the devDependency "${pkg}" is not installed (run npm ci)`);
  }
  return path;
}

/** The built package the runtimes import; `npm test` builds it before vitest runs. */
export function requireDist(...files: string[]): void {
  for (const file of files) {
    if (!existsSync(`${repoRoot}${file}`)) throw new Error(`${file} is missing: run npm run build first`);
  }
}

/** One line of serve.mjs's report stream. */
export type Report = Record<string, unknown> & { type: string };

/** A Deno or Bun process running serve.mjs, read as a stream of {@link Report}s. */
export class RuntimeProcess {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #reports: Report[] = [];
  readonly #waiters = new Set<() => void>();
  #stderr = '';
  #stray = '';
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly #exited: Promise<void>;

  constructor(
    readonly label: string,
    command: string,
    args: string[],
  ) {
    this.#child = spawn(command, args, {
      cwd: repoRoot,
      // NO_COLOR keeps escape codes out of stderr in failure messages; no update check on CI.
      env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
      stdio: 'pipe',
    });
    let partial = '';
    this.#child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) this.#line(line);
    });
    this.#child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.#stderr += chunk;
    });
    this.#exited = new Promise((resolve) => {
      this.#child.on('error', (error) => {
        this.#stderr += `\n[spawn failed: ${error.message}]`;
        this.#exit ??= { code: null, signal: null };
        this.#wake();
        resolve();
      });
      this.#child.on('close', (code, signal) => {
        this.#exit = { code, signal };
        this.#wake();
        resolve();
      });
    });
  }

  #line(line: string): void {
    try {
      const report = JSON.parse(line) as Report;
      if (typeof report.type === 'string') {
        this.#reports.push(report);
        this.#wake();
        return;
      }
    } catch {
      // Not a report: kept for the failure message below.
    }
    this.#stray += `${line}\n`;
  }

  #wake(): void {
    for (const waiter of this.#waiters) waiter();
  }

  /** What the process said outside its reports, for failure messages. */
  describe(): string {
    const exit = this.#exit ? `exited with ${this.#exit.signal ?? this.#exit.code}` : 'still running';
    return `${this.label} ${exit}\n--- stderr ---\n${this.#stderr || '(empty)'}\n--- other stdout ---\n${this.#stray || '(empty)'}`;
  }

  /** The next report of `type` not taken yet; rejects with the process's stderr when none comes. */
  next(type: string, timeoutMs = 10_000): Promise<Report> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const index = this.#reports.findIndex((r) => r.type === type);
        if (index >= 0) {
          done();
          resolve(this.#reports.splice(index, 1)[0]!);
        } else if (this.#exit) {
          done();
          reject(new Error(`no "${type}" report: ${this.describe()}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no "${type}" report within ${timeoutMs} ms: ${this.describe()}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
      check();
    });
  }

  /**
   * Closes stdin (serve.mjs's signal to stop its server and exit), then kills the process if it has
   * not exited within `graceMs`. Resolves to the exit code (null when it had to be killed).
   */
  async stop(graceMs = 3_000): Promise<number | null> {
    if (!this.#exit) {
      this.#child.stdin.end();
      let timer: NodeJS.Timeout | undefined;
      const killed = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          this.#child.kill('SIGKILL');
          resolve();
        }, graceMs);
      });
      await Promise.race([this.#exited, killed]);
      clearTimeout(timer);
      await this.#exited;
    }
    return this.#exit?.signal ? null : (this.#exit?.code ?? null);
  }
}

/** serve.mjs's config, as its one command-line argument. */
export function scenarioConfig(mock: MockServer): string {
  const { baseUrl, apiKey, signingKey, appUrl } = mock;
  return JSON.stringify({ baseUrl, apiKey, signingKey, appUrl });
}

/** The credits of {@link ACCOUNT} the scenario debits. */
export function credits(mock: MockServer): number {
  return mock.store.balance(ACCOUNT, 'ai-assistant', 'credits');
}

/**
 * Checks what the scenario reported against the mock's own state: every invoice exactly once in
 * the API's order over five pages, the status, the debit (`creditsBefore` is the balance before the
 * scenario ran), and a link that both the runtime and the mock's hosted page accept.
 */
export async function expectScenario(
  results: Record<string, unknown>,
  mock: MockServer,
  creditsBefore: number,
): Promise<void> {
  const expectedIds = mock.store.invoices({ account_ref_id: ACCOUNT }).map((i) => i.processor_invoice_id);
  expect(expectedIds).toHaveLength(45);
  const { invoices, status, debit, hold, link } = results as {
    invoices: { ids: string[]; pageSizes: number[] };
    status: unknown;
    debit: { approved: boolean; remaining: number; eventKey: string };
    hold: { approved: boolean; debited: number; remaining: number; eventKey: string };
    link: { url: string; account_ref_id: string; tampered: string };
  };
  expect(invoices.pageSizes).toEqual([10, 10, 10, 10, 5]);
  expect(new Set(invoices.ids).size).toBe(45);
  expect(invoices.ids).toEqual(expectedIds);
  expect(mock.requests.count({ method: 'GET', path: '/api/invoices/' })).toBe(5);

  expect(status).toEqual({ form: 'single', is_active: true, tier: 'pro' });

  expect(debit.approved).toBe(true);
  expect(debit.remaining).toBe(creditsBefore - 1);
  // A hold of 3 settled with 2: one debit of 2, under the hold's own key.
  expect(hold).toMatchObject({ approved: true, debited: 2, remaining: creditsBefore - 3 });
  expect(hold.eventKey).toMatch(/^hold_[0-9a-f-]{36}$/);
  expect(credits(mock)).toBe(creditsBefore - 3);
  // The keys the SDK made are the ones the mock's ledger holds: exactly one debit each, no retry.
  expect([...mock.store.ledger.keys()]).toEqual([debit.eventKey, hold.eventKey]);
  expect(mock.store.ledger.get(debit.eventKey)?.body).toMatchObject({ debited: 1 });

  expect(link.account_ref_id).toBe(ACCOUNT);
  expect(link.tampered).toBe('invalid_signature');
  expect(new URL(link.url).pathname).toBe('/p/pu_ebook');
  // Signed in the runtime, accepted by Node's build and by the service's own check (the mock's page).
  expect((await verifyHostedLink(link.url, mock.signingKey)).account_ref_id).toBe(ACCOUNT);
  const page = await fetch(link.url);
  expect(await page.json()).toEqual({ ok: true, account_ref_id: ACCOUNT, page: 'product', id: 'pu_ebook' });
}

/** The user agents the SDK sent to the mock, one per distinct value. */
export function userAgents(mock: MockServer): string[] {
  return [...new Set(mock.requests.all({ path: '/api/' }).map((r) => r.headers['user-agent'] ?? '(none)'))];
}

/**
 * Registers `url` as the mock's webhook receiver and fails `acct_active`'s payment: the mock posts
 * `payment-failed` there. Resolves to the delivery once the receiver answered.
 */
export async function deliverPaymentFailed(mock: MockServer, url: string): Promise<WebhookDelivery> {
  mock.webhooks.register(url);
  const delivery = await mock.lifecycle.paymentFailed({ account_ref_id: ACCOUNT });
  expect(delivery, JSON.stringify(delivery.attempts)).toMatchObject({
    url,
    delivered: true,
    attempts: [{ status: 200, ok: true }],
  });
  expect(delivery.event).toMatchObject({
    event: 'payment-failed',
    account_ref_id: ACCOUNT,
    is_active: false,
  });
  expect(mock.webhooks.deliveries().map((d) => d.event.transaction_id)).toEqual([
    delivery.event.transaction_id,
  ]);
  return delivery;
}

/**
 * What the receiver's onEvent reported: exactly the delivered payload (same transaction_id), and
 * the account inactive when it asked the API on receipt.
 */
export function expectSeen(seen: unknown, delivery: WebhookDelivery): void {
  expect(seen).toEqual({ event: delivery.event, active: false });
}

/** One message a tracing.mjs subscriber saw, as it was when published. */
export interface SeenEvent {
  /** The tracing step that was running: retried, failed, access or tracker. */
  step?: string;
  channel: string;
  /** The tracing channel's event, or a plain channel's `event` field. */
  event: string;
  /** Every field of the message, except a context's `error`, `result` and `request`. */
  fields: Record<string, unknown>;
  /** Name and status of a context's `error`, when it had one. */
  error?: { name?: string; status?: number };
  hasResult?: boolean;
}

/** A call's outcome in the runtime. */
export type Outcome =
  | { ok: true; value: unknown }
  | { ok: false; name?: string; status?: number; message: string; synchronous?: true };

/** One throwing-subscriber case of tracing.mjs. */
export interface ThrowingCase {
  channel: string;
  /** The tracing channel's event the thrower was on, or `message` for a plain channel. */
  event: string;
  /** Which call ran: ok, notFound or access (see tracing.mjs). */
  call: string;
  /** How often the thrower ran. */
  thrown: number;
  /** Requests the mock received during the case. */
  sent: number;
  outcome: Outcome;
  /** The outcome and requests are those of the same call without the thrower. */
  unchanged: boolean;
  /** Errors the runtime reported on `process`'s `uncaughtException` during the case. */
  uncaught: number;
  uncaughtAreTheSubscribers: boolean;
}

/** What tracing.mjs answers. */
export interface TracingResults {
  events: SeenEvent[];
  retried: { invoices: number };
  failed: Outcome;
  access: boolean[];
  tracker: { stats: { recorded: number; queued: number; inFlight: number }; unsent: number };
  throwing: {
    baseline: Record<string, { outcome: Outcome; sent: number }>;
    cases: ThrowingCase[];
  };
}

const STATUS_ROUTE = '/api/account/{account_ref_id}/status/';

/**
 * Runs tracing.mjs through `get` (which answers its JSON) and checks the mock's side: the 503 fault it
 * queued over HTTP was used, and its calls reached the mock (two for the retried page).
 */
export async function collectTracing(mock: MockServer, get: () => Promise<unknown>): Promise<TracingResults> {
  const invoicesBefore = mock.requests.count({ method: 'GET', path: '/api/invoices/' });
  const results = (await get()) as TracingResults;
  expect(mock.faults.pending()).toEqual([]);
  expect(mock.requests.count({ method: 'GET', path: '/api/invoices/' }) - invoicesBefore).toBe(2);
  return results;
}

/**
 * What every runtime's subscribers must have seen: each call traced with its route template (the
 * retried one as two attempts, 503 then 200; the failed one ending on `error` with its 404), the
 * access cache's miss, refresh and hit, the tracker's queued and sent, and no account id, key or
 * query value in any published field.
 */
export function expectTracing(results: TracingResults, mock: MockServer): void {
  const { events } = results;
  const of = (step: string, channel: string, event?: string) =>
    events.filter(
      (e) => e.step === step && e.channel === channel && (event === undefined || e.event === event),
    );
  const server = { serverAddress: '127.0.0.1', serverPort: Number(new URL(mock.baseUrl).port) };

  // The retried page: one call, two attempts.
  expect(results.retried).toEqual({ invoices: 5 });
  const page = of('retried', 'billing-sdk:request');
  expect(page.map((e) => e.event)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
  expect(page[0]?.fields).toMatchObject({
    operation: 'invoices.list',
    method: 'GET',
    route: '/api/invoices/',
    ...server,
  });
  expect(page[3]?.fields).toMatchObject({ route: '/api/invoices/', attempt: 2, status: 200 });
  expect(page[3]?.fields.requestId).toMatch(/\S/);
  expect(page[3]?.hasResult).toBe(true);
  const attempts = of('retried', 'billing-sdk:attempt', 'asyncEnd');
  expect(attempts.map((e) => [e.fields.route, e.fields.attempt, e.fields.status])).toEqual([
    ['/api/invoices/', 1, 503],
    ['/api/invoices/', 2, 200],
  ]);
  expect(of('retried', 'billing-sdk:attempt', 'error').map((e) => [e.fields.attempt, e.error])).toEqual([
    [1, { name: 'InternalServerError', status: 503 }],
  ]);

  // The failed call: its trace ends on `error`, with the caller's error and its status.
  expect(results.failed).toMatchObject({ ok: false, name: 'NotFoundError', status: 404 });
  const failed = of('failed', 'billing-sdk:request');
  expect(failed.map((e) => e.event)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
  const [error] = of('failed', 'billing-sdk:request', 'error');
  expect(error?.fields).toMatchObject({
    operation: 'accounts.status',
    route: STATUS_ROUTE,
    attempt: 1,
    status: 404,
  });
  expect(error?.error).toEqual({ name: 'NotFoundError', status: 404 });

  // Two lookups of the access cache: the first asks the API (refresh, then miss), the second is a hit.
  expect(results.access).toEqual([true, true]);
  expect(of('access', 'billing-sdk:access').map((e) => e.fields)).toEqual([
    { event: 'refresh', operation: 'accounts.status' },
    { event: 'miss', operation: 'accounts.status' },
    { event: 'hit', operation: 'accounts.status' },
  ]);
  expect(of('access', 'billing-sdk:request', 'asyncEnd').map((e) => e.fields.route)).toEqual([STATUS_ROUTE]);

  // One usage event through the tracker: queued, then sent by a traced usage.record call.
  expect(results.tracker).toMatchObject({ stats: { recorded: 1, queued: 0, inFlight: 0 }, unsent: 0 });
  expect(of('tracker', 'billing-sdk:tracker').map((e) => e.event)).toEqual(['queued', 'sent']);
  expect(of('tracker', 'billing-sdk:tracker').at(-1)?.fields).toMatchObject({ queued: 0, inFlight: 0 });
  expect(of('tracker', 'billing-sdk:request', 'asyncEnd').map((e) => e.fields)).toEqual([
    expect.objectContaining({ operation: 'usage.record', route: '/api/usage/events/', status: 200 }),
  ]);

  // Every message came from a step, every route is a template, and no field names what was asked.
  expect(events.filter((e) => e.step === undefined)).toEqual([]);
  const routes = new Set(events.filter((e) => e.fields.route !== undefined).map((e) => e.fields.route));
  expect(routes).toEqual(new Set(['/api/invoices/', STATUS_ROUTE, '/api/usage/events/']));
  const published = JSON.stringify(events);
  for (const secret of [ACCOUNT, 'acct_nobody', mock.apiKey, 'page_size', 'api-gateway']) {
    expect(published).not.toContain(secret);
  }
}

/** The cases tracing.mjs runs: every event of both tracing channels, then the access channel. */
const THROWING_CASES = [
  ...['billing-sdk:request', 'billing-sdk:attempt'].flatMap((channel) =>
    ['start', 'end', 'asyncStart', 'asyncEnd', 'error'].map((event) => [channel, event]),
  ),
  ['billing-sdk:access', 'message'],
];

/** The same calls without a throwing subscriber: one request each. */
function expectBaseline(throwing: TracingResults['throwing']): void {
  expect(throwing.baseline).toMatchObject({
    ok: { outcome: { ok: true, value: { account_ref_id: ACCOUNT, is_active: true } }, sent: 1 },
    notFound: { outcome: { ok: false, name: 'NotFoundError', status: 404 }, sent: 1 },
    access: { outcome: { ok: true, value: [true, true] }, sent: 1 },
  });
  expect(throwing.cases.map((c) => [c.channel, c.event])).toEqual(THROWING_CASES);
}

/**
 * As in Node: a subscriber that throws, on any event of any channel, changes neither the call's
 * result nor what it sends; the runtime reports each of its errors as an uncaught exception (not
 * workerd, whose publish throws the error at the SDK, which drops it: `reported: false`).
 */
export function expectSubscriberErrorsIsolated(
  throwing: TracingResults['throwing'],
  { reported = true }: { reported?: boolean } = {},
): void {
  expectBaseline(throwing);
  for (const c of throwing.cases) {
    const label = `${c.channel} ${c.event}: ${JSON.stringify(c)}`;
    // On the access channel the thrower sees refresh, miss and hit.
    expect(c.thrown, label).toBe(c.call === 'access' ? 3 : 1);
    expect(c.unchanged, label).toBe(true);
    if (!reported) {
      expect(c.uncaught, label).toBe(0);
      continue;
    }
    expect(c.uncaught, label).toBe(c.thrown);
    expect(c.uncaughtAreTheSubscribers, label).toBe(true);
  }
}
