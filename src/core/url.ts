/** A query value as methods accept it; `undefined` and `null` are left out of the URL. */
export type QueryValue = string | number | boolean | Date | null | undefined;

/**
 * Query parameters: an object of {@link QueryValue}s. Typed as `object` so that a method's own
 * params interface can be passed as it is.
 */
export type QueryParams = object;

/**
 * Builds a path from a template, percent-encoding every interpolated value as one segment, so an
 * id such as `a/b?c` can never change which endpoint is called.
 *
 * @example path`transactions/${accountRefId}/`
 */
export function path(strings: TemplateStringsArray, ...values: string[]): string {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) {
    out += encodeURIComponent(values[i] ?? '') + (strings[i + 1] ?? '');
  }
  return out;
}

/** `?a=1&b=x` from the defined values, or `''` when there are none. */
export function queryString(query: QueryParams | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query) as [string, QueryValue][]) {
    if (value === undefined || value === null) continue;
    params.append(key, value instanceof Date ? value.toISOString() : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
