import { scrub } from '../util/redact.js';
import type { SpoolFlags } from './args.js';

/**
 * Query parameters that carry a credential in a connection URL: node-postgres reads `password` and
 * `sslpassword` from the query, and a driver may take others (`token`, `secret`, `auth`…). Matched
 * by name, whatever the case, so a new driver's `*password*` is masked too.
 */
const SECRET_PARAM = /pass|secret|token|auth|key$/i;

/** The URL, parsed, or undefined. */
function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/** Whether the user-info of `parsed` is a bare password (a Redis URL's `redis://secret@host`). */
const bareRedisPassword = (parsed: URL): boolean =>
  /^rediss?:$/.test(parsed.protocol) && parsed.username !== '' && parsed.password === '';

/**
 * A connection URL as it may be printed: the user-info password, a Redis URL's lone user-info (read as
 * a password by some clients) and every secret-bearing query parameter replaced by `***`.
 */
export function redactUrl(url: string): string {
  const parsed = parse(url);
  if (!parsed) return '(a URL that does not parse)';
  if (parsed.password) parsed.password = '***';
  if (bareRedisPassword(parsed)) parsed.username = '***';
  for (const name of new Set(parsed.searchParams.keys()))
    if (SECRET_PARAM.test(name)) parsed.searchParams.set(name, '***');
  return parsed.toString();
}

/**
 * Every secret of a connection URL as a driver's message may quote it (raw and decoded): what
 * {@link redactUrl} masks. A URL that does not parse is a secret whole: a driver may still read it.
 */
export function urlSecrets(url: string): string[] {
  const parsed = parse(url);
  if (!parsed) return [url];
  const raw: string[] = [];
  if (parsed.password) raw.push(parsed.password);
  if (bareRedisPassword(parsed)) raw.push(parsed.username);
  const query = url.slice(url.indexOf('?') + 1).split('#')[0] ?? '';
  for (const pair of url.includes('?') ? query.split('&') : []) {
    const [name = '', value = ''] = pair.split('=');
    if (SECRET_PARAM.test(decode(name)) && value) raw.push(value);
  }
  const all = raw.flatMap((secret) => [secret, decode(secret), decode(secret.replaceAll('+', ' '))]);
  // JSON output quotes a secret with its escapes.
  const forms = all.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1)]);
  // Longest first, so a secret holding a shorter one is masked whole.
  return [...new Set(forms)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
}

/** `text`, or its decoded form when it is well encoded. */
function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The secrets of the spool flags' URL (none for a file spool). */
export const flagSecrets = (flags: SpoolFlags | undefined): string[] =>
  flags && flags.kind !== 'file' ? urlSecrets(flags.url) : [];

/** `text` with every secret of `secrets` masked: the CLI's last line of defence on every write. */
export const masked = (text: string, secrets: readonly string[]): string =>
  secrets.length ? scrub(text, secrets).replaceAll('[redacted]', '***') : text;
