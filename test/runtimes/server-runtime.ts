import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/index.js';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import {
  collectTracing,
  credits,
  deliverPaymentFailed,
  expectScenario,
  expectSeen,
  expectSubscriberErrorsIsolated,
  expectTracing,
  MOCK_OPTIONS,
  RuntimeProcess,
  requireDist,
  runtimeBinary,
  scenarioConfig,
  type TracingResults,
  userAgents,
} from './helpers.js';

/**
 * The suite Deno and Bun share: `args` launches serve.mjs (given its config argument) in the
 * runtime of the devDependency `pkg`; `server` names the runtime's HTTP server in test titles.
 */
export function describeServerRuntime(
  pkg: 'deno' | 'bun',
  server: string,
  args: (config: string) => string[],
) {
  describe(`on ${pkg}`, () => {
    let mock: MockServer;
    let runtime: RuntimeProcess;
    let creditsBefore: number;
    let receiverUrl: Promise<string> | undefined;
    let tracing: Promise<TracingResults> | undefined;

    /** The URL serve.mjs serves on (its `listening` report, read once). */
    const listening = (): Promise<string> =>
      (receiverUrl ??= runtime.next('listening').then(({ url }) => url as string));

    /** tracing.mjs's results, run once in the runtime through serve.mjs's GET /tracing. */
    const traced = (): Promise<TracingResults> =>
      (tracing ??= collectTracing(mock, async () => {
        const url = new URL('/tracing', await listening());
        const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
        const text = await response.text();
        expect(response.status, `${text}\n${runtime.describe()}`).toBe(200);
        return JSON.parse(text);
      }));

    beforeAll(async () => {
      const binary = runtimeBinary(pkg);
      requireDist('dist/index.js');
      mock = await startMockServer(MOCK_OPTIONS);
      creditsBefore = credits(mock);
      runtime = new RuntimeProcess(pkg, binary, args(scenarioConfig(mock)));
    });

    afterAll(async () => {
      await runtime?.stop();
      await mock?.close();
    });

    it('walks invoice pages, reads status, debits, settles a credit hold and signs links with the server build', async () => {
      const { type: _, ...results } = await runtime.next('results');
      await expectScenario(results, mock, creditsBefore);
      // Only the server build names the runtime (the browser build sends no user agent of its own).
      expect(userAgents(mock)).toEqual([
        expect.stringMatching(new RegExp(`^billing-sdk/${VERSION.replaceAll('.', '\\.')} ${pkg}/\\d+\\.`)),
      ]);
    }, 15_000);

    it('publishes on billing-sdk:request, :attempt, :access and :tracker, from node:diagnostics_channel', async () => {
      expectTracing(await traced(), mock);
    }, 15_000);

    it("keeps a call's result when a subscriber throws, reporting the error as uncaught (as Node)", async () => {
      expectSubscriberErrorsIsolated((await traced()).throwing);
    }, 15_000);

    it(`receives the mock's webhook in ${server} and stops cleanly`, async () => {
      const url = await listening();
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks\/billing$/);
      const delivery = await deliverPaymentFailed(mock, url);
      const { type: _, ...seen } = await runtime.next('event');
      expectSeen(seen, delivery);
      // Closing stdin stops the server; exit code 0 means nothing failed or hung on the way out.
      expect(await runtime.stop(), runtime.describe()).toBe(0);
    }, 15_000);
  });
}
