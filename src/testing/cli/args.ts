import type { SeedName } from '../seed.js';

/** The port `billing-sdk-mock` listens on without `--port`. */
export const DEFAULT_PORT = 4010;

/** The host `billing-sdk-mock` listens on without `--host`: loopback only. */
export const DEFAULT_HOST = '127.0.0.1';

/** What `--help` prints. */
export const USAGE = `Usage: billing-sdk-mock [options]

Runs the billing-sdk mock of the Billing Service API as a standalone HTTP server, with its
control surface (faults, lifecycle webhooks, request log, reset) under /_mock/.

Options:
  --port <n>           TCP port, 0 for an ephemeral one (default ${DEFAULT_PORT})
  --host <address>     address to listen on (default ${DEFAULT_HOST}; 0.0.0.0 for every interface)
  --seed <demo|empty>  initial data (default demo)
  --api-key <key>      the only API key accepted (default mock-api-key-demo)
  --signing-key <key>  secret hosted-link tokens are signed with (default mock-signing-key-demo)
  --webhook-url <url>  receiver of lifecycle webhooks from the start (and after each reset)
  --json               print one line of JSON (baseUrl, appUrl, controlUrl, apiKey, signingKey,
                       webhookUrl, pid) instead of the human-readable lines
  -h, --help           print this help and exit
  --version            print the version and exit

Stops on SIGINT (Ctrl-C) or SIGTERM with exit code 0.`;

/** Options of a run, every default applied. */
export interface CliOptions {
  /** TCP port; 0 picks an ephemeral one. */
  port: number;
  /** Address or host name to listen on. */
  host: string;
  /** Initial data. */
  seed: SeedName;
  /** The only API key accepted; the mock's default when absent. */
  apiKey?: string | undefined;
  /** Hosted-link signing secret; the mock's default when absent. */
  signingKey?: string | undefined;
  /** Webhook receiver registered at start and on reset. */
  webhookUrl?: string | undefined;
  /** Print the start-up line as JSON. */
  json: boolean;
}

/**
 * What a command line asks for: run the server, print help or the version, or a usage error
 * (a one-line message without the program name, for stderr and exit code 2).
 */
export type CliCommand =
  | { kind: 'run'; options: CliOptions }
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'error'; message: string };

const VALUE_FLAGS = ['port', 'host', 'seed', 'api-key', 'signing-key', 'webhook-url'] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];
const BOOLEAN_FLAGS = ['json', 'help', 'version'] as const;
type BooleanFlag = (typeof BOOLEAN_FLAGS)[number];

const isValueFlag = (name: string): name is ValueFlag => (VALUE_FLAGS as readonly string[]).includes(name);
const isBooleanFlag = (name: string): name is BooleanFlag =>
  (BOOLEAN_FLAGS as readonly string[]).includes(name);

/** Quotes a user's text for a one-line message (JSON escapes newlines and control characters). */
const quote = (text: string): string => JSON.stringify(text);

/** A key as it must appear in a header: visible ASCII, no spaces. */
const KEY = /^[\x21-\x7e]+$/;

type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

function checkPort(value: string): Checked<number> {
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) {
    return { ok: false, message: `bad port ${quote(value)}: expected an integer from 0 to 65535` };
  }
  return { ok: true, value: port };
}

function checkSeed(value: string): Checked<SeedName> {
  if (value === 'demo' || value === 'empty') return { ok: true, value };
  return { ok: false, message: `bad seed ${quote(value)}: expected demo or empty` };
}

function checkHost(value: string): Checked<string> {
  if (/^[^\s/?#@]+$/.test(value)) return { ok: true, value };
  return { ok: false, message: `bad host ${quote(value)}: expected an address or a host name` };
}

function checkKey(flag: string, value: string): Checked<string> {
  if (KEY.test(value)) return { ok: true, value };
  return { ok: false, message: `bad ${flag} ${quote(value)}: expected visible ASCII characters, no spaces` };
}

function checkUrl(value: string): Checked<string> {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url && (url.protocol === 'http:' || url.protocol === 'https:')) return { ok: true, value };
  return { ok: false, message: `bad --webhook-url ${quote(value)}: expected an absolute http(s) URL` };
}

/** Splits argv into flag values; the first problem is reported. */
function collect(
  argv: readonly string[],
): { ok: true; values: Partial<Record<ValueFlag, string>>; json: boolean } | { ok: false; message: string } {
  const values: Partial<Record<ValueFlag, string>> = {};
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--') || arg === '--') {
      const what =
        arg.startsWith('-') && arg !== '-' && arg !== '--' ? 'unknown flag' : 'unexpected argument';
      return { ok: false, message: `${what} ${quote(arg)}` };
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    if (isBooleanFlag(name)) {
      if (inline !== undefined) return { ok: false, message: `--${name} takes no value` };
      if (name === 'json') json = true;
      continue;
    }
    if (!isValueFlag(name)) return { ok: false, message: `unknown flag ${quote(`--${name}`)}` };
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      // A following flag means the value was forgotten; a value starting with "--" needs --flag=value.
      if (next !== undefined && !next.startsWith('--')) {
        value = next;
        i++;
      }
    }
    if (value === undefined || value === '') return { ok: false, message: `--${name} needs a value` };
    // The last occurrence wins, so a script's defaults can be overridden by appending flags.
    values[name] = value;
  }
  return { ok: true, values, json };
}

/**
 * Parses `billing-sdk-mock`'s arguments (without `node` and the script). Pure: never throws and
 * never reads the environment. `-h`/`--help` wins over everything else, then `--version`; otherwise
 * the first problem (unknown flag, missing value, bad port, seed, host, key or URL, stray argument)
 * is returned as `{ kind: 'error' }`.
 */
export function parseCliArgs(argv: readonly string[]): CliCommand {
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  if (argv.includes('--version')) return { kind: 'version' };
  const collected = collect(argv);
  if (!collected.ok) return { kind: 'error', message: collected.message };
  const { values } = collected;
  const checks = {
    port: values.port === undefined ? { ok: true as const, value: DEFAULT_PORT } : checkPort(values.port),
    host: values.host === undefined ? { ok: true as const, value: DEFAULT_HOST } : checkHost(values.host),
    seed: values.seed === undefined ? { ok: true as const, value: 'demo' as const } : checkSeed(values.seed),
    apiKey: values['api-key'] === undefined ? undefined : checkKey('--api-key', values['api-key']),
    signingKey:
      values['signing-key'] === undefined ? undefined : checkKey('--signing-key', values['signing-key']),
    webhookUrl: values['webhook-url'] === undefined ? undefined : checkUrl(values['webhook-url']),
  };
  for (const check of Object.values(checks)) {
    if (check && !check.ok) return { kind: 'error', message: check.message };
  }
  const value = <T>(check: Checked<T> | undefined): T | undefined => (check?.ok ? check.value : undefined);
  return {
    kind: 'run',
    options: {
      port: value(checks.port) ?? DEFAULT_PORT,
      host: value(checks.host) ?? DEFAULT_HOST,
      seed: value(checks.seed) ?? 'demo',
      apiKey: value(checks.apiKey),
      signingKey: value(checks.signingKey),
      webhookUrl: value(checks.webhookUrl),
      json: collected.json,
    },
  };
}
