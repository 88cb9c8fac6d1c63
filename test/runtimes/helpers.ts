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
  const { invoices, status, debit, link } = results as {
    invoices: { ids: string[]; pageSizes: number[] };
    status: unknown;
    debit: { approved: boolean; remaining: number; eventKey: string };
    link: { url: string; account_ref_id: string; tampered: string };
  };
  expect(invoices.pageSizes).toEqual([10, 10, 10, 10, 5]);
  expect(new Set(invoices.ids).size).toBe(45);
  expect(invoices.ids).toEqual(expectedIds);
  expect(mock.requests.count({ method: 'GET', path: '/api/invoices/' })).toBe(5);

  expect(status).toEqual({ form: 'single', is_active: true, tier: 'pro' });

  expect(debit.approved).toBe(true);
  expect(credits(mock)).toBe(creditsBefore - 1);
  expect(debit.remaining).toBe(creditsBefore - 1);
  // The key the SDK generated is the one the mock's ledger holds: exactly one debit, no retry.
  expect([...mock.store.ledger.keys()]).toEqual([debit.eventKey]);
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
