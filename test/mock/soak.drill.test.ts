import { Agent } from 'node:http';
import { describe, expect, it } from 'vitest';
import { DEMO, type MockServer, seededRandom, startMockServer } from '../../src/testing/index.js';
import { rawRequest, waitFor } from './raw-http.js';

const A = DEMO.accounts.active;
const AI = DEMO.products.aiAssistant.product_code;
const DEBIT_PATH = '/api/usage/credits/debit/';
const FOREVER = Number.POSITIVE_INFINITY;

/** Every fault a request core must survive, each on a share of the debits, all at once. */
function addSoakFaults(server: MockServer): void {
  server.faults.add({ status: 429, headers: { 'retry-after': '0' }, probability: 0.08, times: FOREVER });
  server.faults.add({ status: 503, probability: 0.08, times: FOREVER });
  server.faults.add({ method: 'POST', path: DEBIT_PATH, reset: 'before', probability: 0.08, times: FOREVER });
  server.faults.add({ method: 'POST', path: DEBIT_PATH, reset: 'after', probability: 0.08, times: FOREVER });
  server.faults.add({ method: 'POST', path: DEBIT_PATH, stall: 'body', probability: 0.05, times: FOREVER });
}

const debitBody = (eventKey: string) =>
  JSON.stringify({
    account_ref_id: A,
    product_code: AI,
    meter_code: 'credits',
    quantity: 1,
    event_key: eventKey,
  });

/** What the client saw; `requestId` is the header of any answer that came. */
type Seen =
  | { kind: 'ok' | '429' | '503'; requestId: string; key: string }
  | { kind: 'stall'; requestId: string; key: string }
  | { kind: 'reset'; key: string };

/**
 * The store must agree with what the client saw: answered debits and stalled ones (applied before
 * the stall) are in the ledger, refused ones are not, and resets split into the two kinds.
 */
function expectConsistentStore(server: MockServer, seen: Seen[]): void {
  const inLedger = (s: Seen) => server.store.ledger.has(s.key);
  for (const s of seen) {
    if (s.kind === 'ok' || s.kind === 'stall') expect(inLedger(s), `${s.kind} ${s.key}`).toBe(true);
    if (s.kind === '429' || s.kind === '503') expect(inLedger(s), `${s.kind} ${s.key}`).toBe(false);
  }
  const resets = seen.filter((s) => s.kind === 'reset');
  const after = resets.filter(inLedger).length;
  expect(after, 'resets after the handler').toBeGreaterThan(0);
  expect(resets.length - after, 'resets before the handler').toBeGreaterThan(0);
  const applied = seen.filter(inLedger).length;
  expect(server.store.balance(A, AI, 'credits')).toBe(1000 - applied);
  // Every answer names a request the mock recorded, and no two share an id.
  const recorded = new Set(server.requests.all().map((r) => r.requestId));
  expect(recorded.size).toBe(seen.length);
  for (const s of seen) if ('requestId' in s) expect(recorded.has(s.requestId)).toBe(true);
  // The faults never run out.
  expect(server.faults.size).toBe(5);
}

function tally(seen: Seen[]): Record<string, number> {
  const counts: Record<string, number> = { ok: 0, '429': 0, '503': 0, reset: 0, stall: 0 };
  for (const s of seen) counts[s.kind] = (counts[s.kind] ?? 0) + 1;
  return counts;
}

/** One debit with plain fetch; a stalled answer is recognised by its missing length, then aborted. */
async function fetchDebit(server: MockServer, key: string): Promise<Seen> {
  const controller = new AbortController();
  let response: Response;
  try {
    response = await fetch(`${server.baseUrl}usage/credits/debit/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: debitBody(key),
      signal: controller.signal,
    });
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return { kind: 'reset', key };
  }
  const requestId = response.headers.get('x-request-id') ?? '';
  if (response.status === 200 && response.headers.get('content-length') === null) {
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    controller.abort();
    await reader.read().catch(() => undefined);
    return { kind: 'stall', requestId, key };
  }
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status === 429) expect(response.headers.get('retry-after')).toBe('0');
  if (response.status === 503) expect(body).toEqual({ detail: 'Service unavailable.' });
  if (response.status === 200) expect(body).toMatchObject({ approved: true, debited: 1 });
  const kind = ({ 200: 'ok', 429: '429', 503: '503' } as const)[response.status as 200 | 429 | 503];
  expect(kind, `status ${response.status}`).toBeDefined();
  return { kind, requestId, key };
}

describe('fault soak', () => {
  it('one at a time with fetch: every fault fires, the store agrees, and a seed replays it exactly', async () => {
    const run = async () => {
      const server = await startMockServer({ random: seededRandom(2024) });
      try {
        addSoakFaults(server);
        const seen: Seen[] = [];
        for (let i = 0; i < 300; i++) seen.push(await fetchDebit(server, `seq-${i}`));
        expectConsistentStore(server, seen);
        // Requests ran one at a time, so the log is in the same order as what the client saw.
        const ids = server.requests.all().map((r) => r.requestId);
        seen.forEach((s, i) => {
          if ('requestId' in s) expect(s.requestId).toBe(ids[i]);
        });
        return seen.map((s) => s.kind);
      } finally {
        await server.close();
      }
    };
    const first = await run();
    const counts = tally(first.map((kind) => ({ kind, key: '' }) as Seen));
    for (const kind of ['ok', '429', '503', 'reset', 'stall']) expect(counts[kind], kind).toBeGreaterThan(0);
    expect(await run()).toEqual(first);
  });

  it('eight at a time with a keep-alive agent: no socket or answer outlives the client', async () => {
    const server = await startMockServer({ random: seededRandom(99) });
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    try {
      addSoakFaults(server);
      const seen: Seen[] = [];
      let maxOpen = 0;
      let next = 0;
      const worker = async () => {
        while (next < 400) {
          const key = `par-${next++}`;
          const outcome = await rawRequest(`${server.baseUrl}usage/credits/debit/`, {
            method: 'POST',
            headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
            body: debitBody(key),
            agent,
            // The client's own deadline is what ends a stalled answer.
            timeoutMs: 300,
          });
          maxOpen = Math.max(maxOpen, server.openConnections());
          if (outcome.kind === 'reset') {
            seen.push({ kind: 'reset', key });
            continue;
          }
          expect(outcome.headers, `${outcome.kind} without a head`).toBeDefined();
          const requestId = String(outcome.headers?.['x-request-id']);
          if (outcome.kind === 'timeout') {
            expect(outcome).toMatchObject({ status: 200 });
            expect(outcome.headers?.['content-length']).toBeUndefined();
            seen.push({ kind: 'stall', requestId, key });
            continue;
          }
          const kind = ({ 200: 'ok', 429: '429', 503: '503' } as const)[outcome.status as 200 | 429 | 503];
          expect(kind, `status ${outcome.status}`).toBeDefined();
          seen.push({ kind, requestId, key });
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      expect(seen).toHaveLength(400);
      const counts = tally(seen);
      for (const kind of ['ok', '429', '503', 'reset', 'stall'])
        expect(counts[kind], kind).toBeGreaterThan(0);
      expectConsistentStore(server, seen);
      expect(maxOpen).toBeLessThanOrEqual(8);
      await waitFor(() => server.activeRequests() === 0, 'every answer finished or dropped');
      agent.destroy();
      await waitFor(() => server.openConnections() === 0, 'every socket closed');
    } finally {
      agent.destroy();
      await server.close();
    }
  });
});
