import { MESSAGES } from './errors.js';
import type { FieldErrors } from './validation.js';

/** Page parameters of a list request after validation. */
export interface PageParams {
  page: number;
  pageSize: number;
}

/** The reference's defaults and limit. */
export const PAGE_DEFAULTS = { page: 1, pageSize: 20, maxPageSize: 100 } as const;

function parseInteger(value: string): number | undefined {
  return /^[+-]?\d+$/.test(value.trim()) ? Number(value) : undefined;
}

/**
 * Reads `page` and `page_size`, adding the 400 field messages for invalid values to `errors`
 * (so they combine with other invalid filters in one answer).
 */
export function readPageParams(query: URLSearchParams, errors: FieldErrors): PageParams {
  const params: PageParams = { page: PAGE_DEFAULTS.page, pageSize: PAGE_DEFAULTS.pageSize };
  const page = query.get('page');
  if (page !== null) {
    const n = parseInteger(page);
    if (n === undefined) errors.add('page', MESSAGES.integer);
    else if (n < 1) errors.add('page', MESSAGES.minOne);
    else params.page = n;
  }
  const pageSize = query.get('page_size');
  if (pageSize !== null) {
    const n = parseInteger(pageSize);
    if (n === undefined) errors.add('page_size', MESSAGES.integer);
    else if (n < 1) errors.add('page_size', MESSAGES.minOne);
    else if (n > PAGE_DEFAULTS.maxPageSize) errors.add('page_size', MESSAGES.maxPageSize);
    else params.pageSize = n;
  }
  return params;
}

/** The items of one page; a page past the end is empty rather than an error. */
export function pageSlice<T>(items: readonly T[], params: PageParams): T[] {
  const start = (params.page - 1) * params.pageSize;
  return items.slice(start, start + params.pageSize);
}

function linkTo(requestUrl: string, page: number): string {
  const url = new URL(requestUrl);
  // Like DRF, the link to the first page drops `page` instead of saying page=1.
  if (page === 1) url.searchParams.delete('page');
  else url.searchParams.set('page', String(page));
  return url.href;
}

/**
 * The full envelope `{count, next, previous, results}`. Links are absolute URLs of the same
 * request (other query parameters kept) with the page moved by one.
 */
export function pageEnvelope<T>(
  items: readonly T[],
  params: PageParams,
  requestUrl: string,
): { count: number; next: string | null; previous: string | null; results: T[] } {
  const hasNext = params.page * params.pageSize < items.length;
  return {
    count: items.length,
    next: hasNext ? linkTo(requestUrl, params.page + 1) : null,
    previous: params.page > 1 ? linkTo(requestUrl, params.page - 1) : null,
    results: pageSlice(items, params),
  };
}
