import type { WithResponse } from './api-promise.js';
import { InvalidRequestError, PaginationError } from './errors/index.js';

/** A list envelope as the API sends it. `next`/`previous` are absent on tiers and products. */
export interface PageEnvelope<T> {
  count: number;
  next?: string | null | undefined;
  previous?: string | null | undefined;
  results: T[];
}

/** Loads page number `page` of the same list, with the same parameters. */
export type PageLoader<T> = (page: number, signal?: AbortSignal) => Promise<WithResponse<PageEnvelope<T>>>;

/**
 * One page of a list. `next` and `previous` are the server's links, kept for reference only: the
 * SDK never follows them (a link to another host would carry the API key away); the next page is
 * always the same request with `page + 1`.
 */
export class Page<T> {
  /** Total number of items in the list, as the server counts them. */
  readonly count: number;
  /** The server's link to the next page, or null. A signal only: never requested. */
  readonly next: string | null;
  /** The server's link to the previous page, or null. */
  readonly previous: string | null;
  /** This page's items. */
  readonly results: T[];
  /** This page's number (1-based). */
  readonly page: number;
  readonly #load: PageLoader<T>;
  readonly #hasNextLink: boolean | undefined;
  /** Items on the pages before this one, for lists that end on `count`. */
  readonly #before: number;

  /** @internal Built by the SDK; use `await client.<resource>.list()` to get one. */
  constructor(envelope: PageEnvelope<T>, page: number, before: number, load: PageLoader<T>) {
    this.count = envelope.count;
    this.next = envelope.next ?? null;
    this.previous = envelope.previous ?? null;
    this.results = envelope.results;
    this.page = page;
    this.#load = load;
    this.#before = before;
    this.#hasNextLink = envelope.next === undefined ? undefined : envelope.next !== null;
  }

  /** Whether another page exists: the server's `next` said so, `count` is not reached, and this page was not empty. */
  hasNextPage(): boolean {
    if (this.results.length === 0) return false;
    if (this.#hasNextLink === false) return false;
    return this.#before + this.results.length < this.count;
  }

  /** Fetches the next page (same parameters, `page + 1`). Throws {@link PaginationError} when there is none. */
  async getNextPage(): Promise<Page<T>> {
    if (!this.hasNextPage()) throw new PaginationError(`page ${this.page} is the last page`);
    return this.#follow((await this.#load(this.page + 1)).data);
  }

  /**
   * The page after this one, from its envelope. A page that repeats this one, or a `count` that
   * changed, means the list moved under the walk: items would be skipped or seen twice, so the walk
   * stops with a {@link PaginationError} instead.
   */
  #follow(envelope: PageEnvelope<T>): Page<T> {
    const next = new Page(envelope, this.page + 1, this.#before + this.results.length, this.#load);
    if (next.results.length > 0 && sameItems(this.results, next.results)) {
      throw new PaginationError(
        `page ${next.page} repeated page ${this.page}: the server ignores the page parameter; stopped instead of looping`,
      );
    }
    if (next.count !== this.count) {
      throw new PaginationError(
        `the list changed during the walk (count ${this.count} on page ${this.page}, ${next.count} on page ${next.page}); stopped rather than skip or repeat items`,
      );
    }
    return next;
  }

  /**
   * Throws {@link PaginationError} when this last page of a walk ends it short of `count`: an empty
   * page while `next` says there is more, or `next: null` before `count` items were seen. A list
   * that ends short in silence would read as complete (an invoice missing from a total).
   */
  #endsWhole(): void {
    const seen = this.#before + this.results.length;
    if (seen >= this.count) return;
    const why = this.results.length === 0 ? 'was empty' : 'said there was no next page';
    throw new PaginationError(
      `the list ended after ${seen} of ${this.count} items (page ${this.page} ${why}); stopped rather than return a short list`,
    );
  }

  /**
   * The pages after this one, in order, with up to `concurrency` requested ahead of the consumer.
   * Page numbers are known from `count` and this page's size, so requests need not wait for one
   * another; the next request is sent only as the consumer takes a page, and when it stops early
   * the pages still in flight are aborted.
   *
   * @internal
   */
  static async *walk<T>(from: Page<T>, concurrency: number): AsyncGenerator<Page<T>, void, undefined> {
    // A static generator holding only the current page: a method's frame would keep `this`, the
    // first page, alive for the whole walk.
    let page = from;
    const load = page.#load;
    const size = page.results.length;
    const last = size > 0 ? page.page + Math.ceil((page.count - page.#before - size) / size) : page.page;
    const stop = new AbortController();
    const ahead: Promise<WithResponse<PageEnvelope<T>>>[] = [];
    let requested = page.page;
    from = undefined as unknown as Page<T>;
    try {
      while (page.hasNextPage()) {
        while (ahead.length < concurrency && (requested < last || ahead.length === 0)) {
          const loading = load(++requested, stop.signal);
          // Awaited in order below; one left behind by an early stop must not be an unhandled rejection.
          loading.catch(() => {});
          ahead.push(loading);
        }
        page = page.#follow((await (ahead.shift() as Promise<WithResponse<PageEnvelope<T>>>)).data);
        yield page;
      }
      page.#endsWhole();
    } finally {
      stop.abort();
    }
  }
}

export async function loadFirstPage<T>(
  load: PageLoader<T>,
  start: number,
  pageSize: number,
): Promise<WithResponse<Page<T>>> {
  const { data, response } = await load(start);
  return { data: new Page(data, start, (start - 1) * pageSize, load), response };
}

/** Cheap repeat check: the first and last items of both pages are equal. */
function sameItems<T>(a: T[], b: T[]): boolean {
  return (
    a.length === b.length &&
    JSON.stringify(a[0]) === JSON.stringify(b[0]) &&
    JSON.stringify(a[a.length - 1]) === JSON.stringify(b[b.length - 1])
  );
}

/**
 * The result of a list method. `await` it for the first {@link Page}; `for await` it for every
 * item of every page; `.pages()` for every page; `.toArray()` to collect. Nothing is requested
 * until it is awaited or iterated, and each iteration holds at most two pages.
 *
 * @example
 * ```ts
 * for await (const invoice of billing.invoices.list({ account_ref_id: 'acct_1' })) {
 *   console.log(invoice.processor_invoice_id, invoice.status);
 * }
 * const first = await billing.invoices.list({ account_ref_id: 'acct_1', page_size: 50 });
 * if (first.hasNextPage()) await first.getNextPage();
 * ```
 */
export class PagePromise<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  readonly #first: () => Promise<WithResponse<Page<T>>>;
  #promise: Promise<WithResponse<Page<T>>> | undefined;

  /**
   * @internal Built by the SDK's list methods; `first` runs on the first await or iteration. It must
   * be an async function: then a bad parameter rejects, and `.catch(handler)` runs the handler.
   */
  constructor(first: () => Promise<WithResponse<Page<T>>>) {
    this.#first = first;
  }

  #answer(): Promise<WithResponse<Page<T>>> {
    this.#promise ??= this.#first();
    return this.#promise;
  }

  #firstPage(): Promise<Page<T>> {
    return this.#answer().then((answer) => answer.data);
  }

  /** The first page together with the HTTP response it came from (status, headers, request id). */
  withResponse(): Promise<WithResponse<Page<T>>> {
    return this.#answer().then((answer) => answer);
  }

  // biome-ignore lint/suspicious/noThenProperty: a PagePromise is awaited like a promise of its first page.
  then<R1 = Page<T>, R2 = never>(
    onfulfilled?: ((value: Page<T>) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#firstPage().then(onfulfilled, onrejected);
  }

  /** Like `Promise.prototype.catch`. */
  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<Page<T> | R> {
    return this.#firstPage().catch(onrejected);
  }

  /** Like `Promise.prototype.finally`. */
  finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.#firstPage().finally(onfinally);
  }

  /**
   * Every page in order, starting with the first. Holds one page at a time. A list that ends before
   * `count` items were seen (an empty page, or `next: null`, too early) throws
   * {@link PaginationError} saying how many of how many were seen.
   */
  async *pages(options: WalkOptions = {}): AsyncGenerator<Page<T>, void, undefined> {
    const concurrency = concurrencyOf(options);
    let first: Page<T> | undefined = await this.#firstPage();
    // The first page stays reachable through the memoised promise and this frame; drop both so a
    // long walk holds only the pages in flight and the one being read.
    this.#promise = undefined;
    yield first;
    const rest = Page.walk(first, concurrency);
    first = undefined;
    // A loop, not `yield* rest`: delegation kept the last iterator result (and its page) alive.
    for (;;) {
      const next = await rest.next();
      if (next.done) return;
      yield next.value;
    }
  }

  /**
   * Every item of every page, in order; `concurrency` pages are fetched at once (default 1).
   *
   * @example
   * ```ts
   * for await (const invoice of billing.invoices.list({ account_ref_id: 'acct_1' }).items({ concurrency: 8 })) {
   *   console.log(invoice.processor_invoice_id);
   * }
   * ```
   */
  async *items(options: WalkOptions = {}): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages(options)) yield* page.results;
  }

  /** Every item of every page, one page at a time: `for await (const item of list)`. */
  [Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    return this.items();
  }

  /** Collects items into an array, stopping after `limit` items when given; `concurrency` pages are fetched at once. */
  async toArray(options: WalkOptions & { limit?: number | undefined } = {}): Promise<T[]> {
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const out: T[] = [];
    if (limit <= 0) return out;
    for await (const item of this.items(options)) {
      out.push(item);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Shown by `Object.prototype.toString`. */
  get [Symbol.toStringTag](): string {
    return 'PagePromise';
  }
}

/** How a list is walked. */
export interface WalkOptions {
  /**
   * Pages requested at once, ahead of the consumer (default 1: one after another). Pages still come
   * out in order, and at most `concurrency` are held besides the one being read.
   */
  concurrency?: number | undefined;
}

function concurrencyOf(options: WalkOptions): number {
  const { concurrency = 1 } = options ?? {};
  if (Number.isInteger(concurrency) && concurrency >= 1) return concurrency;
  throw new InvalidRequestError('pages', [{ field: 'concurrency', message: 'must be an integer >= 1' }]);
}
