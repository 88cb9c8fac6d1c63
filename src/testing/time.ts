/** Formats a date the way the service does: ISO 8601 UTC, second precision, `Z` suffix. */
export function isoTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Adds whole days to an ISO timestamp; the seed's dates are all derived this way. */
export function addDays(iso: string, days: number): string {
  return isoTimestamp(new Date(Date.parse(iso) + days * 86_400_000));
}
