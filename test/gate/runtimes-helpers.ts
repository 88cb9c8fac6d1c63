import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { expect } from 'vitest';
import { verifyHostedLink } from '../../src/index.js';
import { DEMO, type MockServer } from '../../src/testing/index.js';
import { repoRoot } from '../runtimes/helpers.js';

/** The gated route of every runtime (fixtures/gate-app.mjs). */
export const ROUTE = '/reports';

/** What the runtime hands the handler after the request: workerd's bindings, serve.mjs's stand-in. */
export const APP_NAME = 'gated-app';

/**
 * `entry` bundled as wrangler bundles a worker: one ESM file, export conditions workerd, worker,
 * browser, and `billing-sdk` resolved by self-reference through package.json "exports" (as from
 * node_modules). No `node:` import is allowed: one anywhere fails the bundle.
 */
export async function bundleWorker(entry: string, outfile: string): Promise<Metafile> {
  const { metafile } = await build({
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    target: 'es2022',
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: repoRoot,
  });
  return metafile;
}

/** Miniflare (a devDependency, with the workerd binary it brings): a missing one is a broken install. */
export async function loadMiniflare(): Promise<typeof import('miniflare')> {
  const workerd = `${repoRoot}node_modules/.bin/workerd`;
  if (!existsSync(workerd))
    throw new Error(`${workerd} is missing: the devDependency "miniflare" is not installed`);
  return import('miniflare');
}

/** The mock's status and resolve requests so far: what the gate asked the service. */
export function serviceCalls(mock: MockServer): { status: number; resolve: number } {
  return {
    status: mock.requests.count({ method: 'GET', path: '/api/account/' }),
    resolve: mock.requests.count({ method: 'GET', path: '/api/resolve/public-url/' }),
  };
}

/** A request to the gated route as `account` (with the account's e-mail, as a session would give it). */
function ask(url: string, account: string, email: string, accept: string): Promise<Response> {
  return fetch(url, {
    headers: { 'x-account': account, 'x-email': email, accept },
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
}

/** The body as JSON; on a parse failure, the text and `describe()` (the runtime's output) in the message. */
async function json(response: Response, describe: () => string): Promise<Record<string, unknown>> {
  const text = await response.text();
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${response.status} ${text}\n${describe()}`);
  }
}

/**
 * The gated route in a runtime, against the mock: an active account's request reaches the handler
 * (with what the runtime passed it, `app`); an inactive account's API request gets 402
 * problem+json whose `upgrade_url` is a signed paywall link the mock's hosted page accepts, and its
 * browser navigation a 303 to that same link, resolved once (reused for the second "no").
 */
export async function expectGatedRoute(
  origin: string,
  mock: MockServer,
  app: string | null,
  describe: () => string,
): Promise<void> {
  const url = new URL(ROUTE, origin).href;
  const before = serviceCalls(mock);

  const allowed = await ask(url, DEMO.accounts.active, DEMO.emails.active, 'application/json');
  const allowedBody = await json(allowed, describe);
  expect(allowed.status, JSON.stringify(allowedBody)).toBe(200);
  expect(allowedBody).toEqual({ page: 'reports', account: DEMO.accounts.active, app });

  const denied = await ask(url, DEMO.accounts.pastDue, DEMO.emails.pastDue, 'application/json');
  const problem = await json(denied, describe);
  expect(denied.status, JSON.stringify(problem)).toBe(402);
  expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(problem).toMatchObject({ status: 402, reason: 'inactive' });
  for (const field of ['type', 'title', 'detail', 'upgrade_url'])
    expect(typeof problem[field]).toBe('string');
  const link = problem.upgrade_url as string;
  expect(link.startsWith(`${mock.appUrl}/t/${DEMO.tiers.proPro.tier_url_id}?u=`)).toBe(true);
  expect((await verifyHostedLink(link, mock.signingKey)).account_ref_id).toBe(DEMO.accounts.pastDue);
  const page = await fetch(link);
  expect(await page.json()).toEqual({
    ok: true,
    account_ref_id: DEMO.accounts.pastDue,
    page: 'tier',
    id: DEMO.tiers.proPro.tier_url_id,
  });

  const navigation = await ask(url, DEMO.accounts.pastDue, DEMO.emails.pastDue, 'text/html,*/*;q=0.8');
  expect(navigation.status, await navigation.clone().text()).toBe(303);
  expect(navigation.headers.get('location')).toBe(link);

  // One status request per account, one resolve for both "no"s: the second reused the link.
  const after = serviceCalls(mock);
  expect({ status: after.status - before.status, resolve: after.resolve - before.resolve }).toEqual({
    status: 2,
    resolve: 1,
  });
}
