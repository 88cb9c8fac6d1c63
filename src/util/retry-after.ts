/**
 * How long the server asked us to wait, in ms, or `undefined` when it did not say.
 * Accepts `retry-after-ms` (milliseconds), and `retry-after` as delta-seconds or an HTTP-date.
 */
export function parseRetryAfter(
  headers: Record<string, string>,
  now: number = Date.now(),
): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const raw = headers['retry-after']?.trim();
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.round(Number(raw) * 1000);
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
