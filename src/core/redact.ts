/** Header names whose values are credentials or session state: never kept, logged or shown. */
const sensitive = new Set(['authorization', 'x-api-key', 'cookie', 'set-cookie', 'proxy-authorization']);

/** Response headers as a plain lower-cased object, without credentials or cookies. */
export function headersToObject(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!sensitive.has(name)) out[name] = value;
  });
  return out;
}

/** Request headers for a debug log: credentials replaced by `[redacted]`. */
export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = sensitive.has(name.toLowerCase()) ? '[redacted]' : value;
  }
  return out;
}
