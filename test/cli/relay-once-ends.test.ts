// `relay --once` always ends, for a cron slot or a Kubernetes Job: nothing recorded for --stall ms
// (nothing listening, a 503 on every send) gives up with the last error on stderr and exit 1; a
// refused API key (401) is said at once. The events stay in the spool either way.
import { describe, expect, it } from 'vitest';
import { events, fileBackend, run, seed, USAGE_PATH, useCli } from './helpers.js';

const cli = useCli();

describe('relay --once when every send fails', () => {
  it('a 503 on every send: gives up after --stall, says the last error, exit 1, events kept', async () => {
    const backend = fileBackend();
    try {
      await seed(backend, events(2));
      cli.mock.faults.add({ method: 'POST', path: USAGE_PATH, status: 503, times: Number.POSITIVE_INFINITY });
      const started = Date.now();
      const result = await run(cli, ['relay', '--once', '--stall', '5000', '--json', ...backend.flags]);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/gave up: nothing was recorded for 5000 ms; the last error: .*503/);
      expect(result.json.at(-1)).toMatchObject({ type: 'done', recorded: 0, deadLettered: 0, left: 2 });
    } finally {
      cli.mock.faults.clear();
    }
    // Kept for the next run, which sends them.
    const next = await run(cli, ['relay', '--once', '--json', ...backend.flags]);
    expect(next.code, next.stderr).toBe(0);
    expect(next.json.at(-1)).toMatchObject({ type: 'done', recorded: 2, left: 0 });
    await backend.cleanup();
  }, 40_000);

  it('nothing listening at the base URL: ends too', async () => {
    const backend = fileBackend();
    await seed(backend, events(1));
    const result = await run(cli, ['relay', '--once', '--stall', '1000', ...backend.flags], {
      BILLING_BASE_URL: 'http://127.0.0.1:1',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('gave up');
    await backend.cleanup();
  }, 40_000);

  it('a refused API key: said at once (no stall wait), exit 1, events kept, none dead-lettered', async () => {
    const backend = fileBackend();
    await seed(backend, events(2));
    const started = Date.now();
    const result = await run(cli, ['relay', '--once', '--json', ...backend.flags], {
      BILLING_API_KEY: 'sk_wrong_key',
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('refused the API key (401');
    expect(result.json.at(-1)).toMatchObject({ type: 'done', deadLettered: 0, left: 2 });
    await backend.cleanup();
  }, 40_000);
});
