import { parseArgs } from 'node:util';

/** Where the spool a command works on is: one of the three durable spools, by its flags. */
export type SpoolFlags =
  | {
      kind: 'postgres';
      url: string;
      table: string | undefined;
      schema: string | undefined;
      consumer: string | undefined;
    }
  | { kind: 'redis'; url: string; stream: string | undefined; cluster: boolean; consumer: string | undefined }
  | { kind: 'file'; dir: string };

/** `billing-sdk relay`'s options. */
export interface RelayArgs {
  spool: SpoolFlags;
  /** Drain what is there, then exit (0 all recorded, 1 any left or dead-lettered). */
  once: boolean;
  concurrency: number | undefined;
  /** How long a stop (SIGTERM, SIGINT) may keep sending, in ms. */
  graceMs: number;
  /** Milliseconds between progress reports. */
  intervalMs: number | undefined;
  /** With `once`: how long a drain may go without recording or dead-lettering anything before it gives up, in ms. */
  stallMs: number;
  json: boolean;
}

/** `billing-sdk dead-letters`' options. */
export interface DeadLettersArgs {
  action: 'list' | 'replay' | 'drop';
  spool: SpoolFlags;
  /** The ids given, or `'all'` for `--all`; empty for `list`. */
  ids: string[] | 'all';
  json: boolean;
}

/** What a command line asks for; `error` is a usage error (stderr, exit 2). */
export type Command =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'relay'; args: RelayArgs }
  | { kind: 'doctor'; spool: SpoolFlags | undefined; json: boolean }
  | { kind: 'dead-letters'; args: DeadLettersArgs }
  | { kind: 'error'; message: string };

/** What `--help` prints. */
export const USAGE = `Usage: billing-sdk <command> [options]

Commands:
  relay          send what a durable spool holds, from this process, until SIGTERM or SIGINT
  dead-letters   list | replay [ids…|--all] | drop [ids…|--all]: the events the service refused for good
  doctor         check the API key, the base URL, the clock and (with spool flags) the spool

The spool (one of):
  --postgres <url>     a postgresSpool's database (needs the pg package)
    --table <name>     its table (default: the service's, billing_sdk_usage_outbox_<hex>,
                       named after BILLING_API_KEY and BILLING_BASE_URL as the app's tracker does)
    --schema <name>    its schema (default public)
  --redis <url>        a redisSpool's Redis (needs the ioredis or redis package)
    --stream <key>     its stream (default: the service's, billing-sdk:usage:<hex>, likewise)
    --cluster          the URL is a node of a Redis Cluster
  --dir <path>         a fileSpool's directory

relay options:
  --consumer <name>    with --postgres or --redis: this relay's stable name (a pod or host name,
                       never two relays at once): restarted, it takes back at once what it held;
                       without it, another relay sends that after the spool's claim time (30 s)
  --once               drain what is there and exit: 0 when every event was recorded, 1 when any
                       is left unsent or was dead-lettered
  --concurrency <n>    requests under way at once (default 8)
  --grace <ms>         how long a stop keeps sending before it leaves the rest (default 10000)
  --interval <ms>      time between progress reports (default 1000 on a terminal, else 10000)
  --stall <ms>         with --once: give up when nothing was recorded or dead-lettered for this
                       long (default 60000): the last error on stderr, exit 1, events kept

Common options:
  --json               one JSON object per line instead of text
  -h, --help           print this help and exit
  --version            print the version and exit

The client is configured by the environment: BILLING_API_KEY (required), BILLING_BASE_URL.
After a key rotation, doctor names the old key's stream or table while it holds events, and
relay --stream (or --table) <that name> --once sends them with the current key.
Exit codes: 0 done, 1 a check failed or events were left, 2 bad usage or a spool out of reach.`;

const OPTIONS = {
  postgres: { type: 'string' },
  table: { type: 'string' },
  schema: { type: 'string' },
  redis: { type: 'string' },
  stream: { type: 'string' },
  cluster: { type: 'boolean' },
  dir: { type: 'string' },
  consumer: { type: 'string' },
  once: { type: 'boolean' },
  concurrency: { type: 'string' },
  grace: { type: 'string' },
  interval: { type: 'string' },
  stall: { type: 'string' },
  all: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

type Values = {
  [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean;
};

/** Flags only some commands take: used by another, they are a usage error rather than ignored. */
const ONLY: Record<string, readonly (keyof Values)[]> = {
  // A consumer name acts as that relay: dead-letters or doctor under it would take what it holds.
  relay: ['once', 'concurrency', 'grace', 'interval', 'stall', 'consumer'],
  'dead-letters': ['all'],
};

class Usage extends Error {}

function integerFlag(
  values: Values,
  name: 'concurrency' | 'grace' | 'interval' | 'stall',
  min: number,
  max: number,
) {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= min && n <= max))
    throw new Usage(`bad --${name} ${JSON.stringify(raw)}: expected an integer from ${min} to ${max}`);
  return n;
}

/** The spool flags, checked: exactly one spool, and its sub-flags only with it. */
function spoolOf(values: Values, required: boolean): SpoolFlags | undefined {
  const given = (['postgres', 'redis', 'dir'] as const).filter((k) => values[k] !== undefined);
  if (given.length > 1) throw new Usage(`give one spool, not ${given.map((k) => `--${k}`).join(' and ')}`);
  for (const [flag, owner] of [
    ['table', 'postgres'],
    ['schema', 'postgres'],
    ['stream', 'redis'],
    ['cluster', 'redis'],
  ] as const) {
    if (values[flag] !== undefined && values[owner] === undefined)
      throw new Usage(`--${flag} needs --${owner}`);
  }
  if (values.consumer !== undefined && values.postgres === undefined && values.redis === undefined) {
    throw new Usage('--consumer needs --postgres or --redis');
  }
  for (const k of ['postgres', 'redis', 'dir', 'table', 'schema', 'stream', 'consumer'] as const) {
    if (values[k] === '') throw new Usage(`--${k} needs a value`);
  }
  for (const k of ['postgres', 'redis'] as const) {
    const url = values[k];
    if (url === undefined) continue;
    const schemes = k === 'postgres' ? ['postgres:', 'postgresql:'] : ['redis:', 'rediss:'];
    let protocol: string | undefined;
    try {
      protocol = new URL(url).protocol;
    } catch {
      protocol = undefined;
    }
    if (!protocol || !schemes.includes(protocol)) {
      throw new Usage(`bad --${k} URL: expected ${schemes.map((s) => `${s}//…`).join(' or ')}`);
    }
  }
  if (values.postgres !== undefined) {
    const { table, schema, consumer } = values;
    return { kind: 'postgres', url: values.postgres, table, schema, consumer };
  }
  if (values.redis !== undefined) {
    const { stream, consumer } = values;
    return { kind: 'redis', url: values.redis, stream, cluster: values.cluster === true, consumer };
  }
  if (values.dir !== undefined) return { kind: 'file', dir: values.dir };
  if (required) throw new Usage('which spool? give --postgres <url>, --redis <url> or --dir <path>');
  return undefined;
}

function command(name: string, positionals: string[], values: Values): Command {
  for (const [owner, flags] of Object.entries(ONLY)) {
    for (const flag of flags) {
      if (owner !== name && values[flag] !== undefined)
        throw new Usage(`--${flag} is not an option of ${name}`);
    }
  }
  const json = values.json === true;
  if (name === 'relay' || name === 'doctor') {
    if (positionals.length) throw new Usage(`unexpected argument ${JSON.stringify(positionals[0])}`);
  }
  if (name === 'relay') {
    const spool = spoolOf(values, true) as SpoolFlags;
    return {
      kind: 'relay',
      args: {
        spool,
        once: values.once === true,
        concurrency: integerFlag(values, 'concurrency', 1, 1024),
        graceMs: integerFlag(values, 'grace', 0, 3_600_000) ?? 10_000,
        intervalMs: integerFlag(values, 'interval', 100, 3_600_000),
        stallMs: integerFlag(values, 'stall', 100, 86_400_000) ?? 60_000,
        json,
      },
    };
  }
  if (name === 'doctor') return { kind: 'doctor', spool: spoolOf(values, false), json };
  if (name === 'dead-letters') {
    const [action, ...ids] = positionals;
    if (action !== 'list' && action !== 'replay' && action !== 'drop') {
      throw new Usage(
        `dead-letters needs list, replay or drop${action === undefined ? '' : `, not ${JSON.stringify(action)}`}`,
      );
    }
    const spool = spoolOf(values, true) as SpoolFlags;
    if (action === 'list') {
      if (ids.length || values.all) throw new Usage('dead-letters list takes no ids and no --all');
      return { kind: 'dead-letters', args: { action, spool, ids: [], json } };
    }
    if (values.all && ids.length) throw new Usage(`dead-letters ${action}: give ids or --all, not both`);
    if (!values.all && !ids.length)
      throw new Usage(`dead-letters ${action}: which ones? give their ids or --all`);
    return { kind: 'dead-letters', args: { action, spool, ids: values.all ? 'all' : ids, json } };
  }
  throw new Usage(`unknown command ${JSON.stringify(name)} (relay, dead-letters or doctor)`);
}

/**
 * Parses `billing-sdk`'s arguments (without `node` and the script) with Node's `parseArgs`. Pure:
 * never reads the environment, and throws only on a bug. `-h`/`--help` wins over everything else,
 * then `--version`, as with `billing-sdk-mock`; otherwise the
 * first problem (no command, an unknown one or flag, a flag of another command, a missing or bad
 * value, no spool or two) is `{ kind: 'error' }`.
 */
export function parseCommand(argv: readonly string[]): Command {
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  if (argv.includes('--version')) return { kind: 'version' };
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    }) as { values: Values; positionals: string[] };
    const [name, ...rest] = positionals;
    if (name === undefined) throw new Usage('which command? relay, dead-letters or doctor');
    return command(name, rest, values);
  } catch (error) {
    // parseArgs' own messages name the flag; its code says it is a usage error, not a bug.
    const usage =
      error instanceof Usage || String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
    if (!usage) throw error;
    return { kind: 'error', message: (error as Error).message };
  }
}
