import { describe, expect, it } from 'vitest';
import {
  APIUserAbortError,
  InternalServerError,
  InvalidRequestError,
  PaginationError,
} from '../../src/index.js';
import { caught, clientFor, recordTraces, until, useMockServer } from '../helpers.js';

const mock = useMockServer();

// acct_active has 45 invoices: 9 pages of 5.
const list = () => clientFor(mock.server).invoices.list({ account_ref_id: 'acct_active', page_size: 5 });
const pagesAsked = () => mock.server.requests.all().map((r) => Number(r.query.page ?? 1));
const ids = (items: { processor_invoice_id: string }[]) => items.map((i) => i.processor_invoice_id);

describe('walking a list with concurrency', () => {
  it('yields the same items in the same order as a sequential walk, each page asked once', async () => {
    const sequential = ids(await list().toArray());
    mock.server.requests.clear();
    const parallel: string[] = [];
    for await (const invoice of list().items({ concurrency: 8 })) parallel.push(invoice.processor_invoice_id);
    expect(parallel).toEqual(sequential);
    expect(parallel).toHaveLength(45);
    expect(pagesAsked().sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('pages come out in order with their numbers', async () => {
    const numbers: number[] = [];
    for await (const page of list().pages({ concurrency: 4 })) numbers.push(page.page);
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('asks at most `concurrency` pages ahead of the consumer, and nothing more once it stops', async () => {
    // A walk asks for more only when a page arrives, so once every page request it started has
    // settled after it stopped, nothing more can come.
    const traces = recordTraces();
    try {
      const pages = list().pages({ concurrency: 3 })[Symbol.asyncIterator]();
      await pages.next(); // page 1: nothing else asked yet
      expect(mock.server.requests.count()).toBe(1);
      await pages.next(); // page 2, with 3 and 4 asked ahead
      await until(() => mock.server.requests.count() === 4);
      await pages.return(undefined);
      await until(
        () =>
          traces.count('billing-sdk:request', 'asyncEnd') === traces.count('billing-sdk:request', 'start'),
      );
      expect(traces.count('billing-sdk:request', 'start')).toBe(4);
      expect(pagesAsked().sort((a, b) => a - b)).toEqual([1, 2, 3, 4]);
    } finally {
      traces.stop();
    }
  });

  it('toArray({ limit }) stops early: the rest of the list is never asked for', async () => {
    const some = await list().toArray({ limit: 12, concurrency: 2 });
    expect(some).toHaveLength(12);
    expect(Math.max(...pagesAsked())).toBeLessThanOrEqual(5);
  });

  it('stops at the last page by count: no page past it is asked for', async () => {
    await list().toArray({ concurrency: 20 });
    expect(Math.max(...pagesAsked())).toBe(9);
  });

  it('a page that fails after its retries fails the walk with that error, after the pages before it', async () => {
    const seen: string[] = [];
    const err = await caught(async () => {
      for await (const page of list().pages({ concurrency: 4 })) {
        seen.push(...ids(page.results));
        if (page.page === 1)
          mock.server.faults.add({ path: '/api/invoices/', status: 500, times: Number.POSITIVE_INFINITY });
      }
    });
    expect(err).toBeInstanceOf(InternalServerError);
    expect(seen).toHaveLength(5);
  });

  it('a count that changes during the walk is reported, not walked over', async () => {
    const err = await caught(async () => {
      for await (const page of list().pages({ concurrency: 4 })) {
        if (page.page === 1) {
          const results = page.results.map((r) => ({
            ...r,
            processor_invoice_id: `${r.processor_invoice_id}_shifted`,
          }));
          const shifted = { count: 46, next: null, previous: null, results };
          mock.server.faults.add({
            path: '/api/invoices/',
            status: 200,
            body: JSON.stringify(shifted),
            times: 20,
          });
        }
      }
    });
    expect(err).toBeInstanceOf(PaginationError);
    expect(err.message).toContain('count 45 on page 1, 46 on page 2');
  });

  it("the caller's signal aborts the walk", async () => {
    const controller = new AbortController();
    const err = await caught(async () => {
      for await (const page of clientFor(mock.server)
        .invoices.list({ account_ref_id: 'acct_active', page_size: 5 }, { signal: controller.signal })
        .pages({ concurrency: 3 })) {
        if (page.page === 2) controller.abort();
      }
    });
    expect(err).toBeInstanceOf(APIUserAbortError);
  });

  it.each([0, -1, 1.5, Number.NaN, '2'])('refuses concurrency %s', async (concurrency) => {
    const err = await caught(() => list().toArray({ concurrency: concurrency as number }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(mock.server.requests.count()).toBe(0);
  });
});
