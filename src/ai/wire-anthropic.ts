import { tokens } from './price.js';
import type { Watcher } from './stream.js';
import type { AIUsage } from './types.js';

// The Anthropic messages wire format, its usage and its stream. Read structurally: the
// `@anthropic-ai/sdk` package is never imported.

type Obj = Record<string, unknown> | undefined;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined);

/** Anthropic's counts as they come: `input_tokens` leaves out the cache's reads and writes. */
interface Counts {
  input: number;
  read: number;
  write: number;
  output: number;
}

const countsOf = (u: Record<string, unknown>, base?: Counts): Counts => ({
  // A message_delta repeats (or leaves out) the input counts of message_start: absent keeps them.
  input: 'input_tokens' in u && u.input_tokens != null ? tokens(u.input_tokens) : (base?.input ?? 0),
  read:
    'cache_read_input_tokens' in u && u.cache_read_input_tokens != null
      ? tokens(u.cache_read_input_tokens)
      : (base?.read ?? 0),
  write:
    'cache_creation_input_tokens' in u && u.cache_creation_input_tokens != null
      ? tokens(u.cache_creation_input_tokens)
      : (base?.write ?? 0),
  output: 'output_tokens' in u && u.output_tokens != null ? tokens(u.output_tokens) : (base?.output ?? 0),
});

const usageFrom = (c: Counts): AIUsage => ({
  input: c.input + c.read + c.write,
  output: c.output,
  cachedInput: c.read,
  cacheWrite: c.write,
  reasoning: 0,
});

/** A message's `usage`: cache reads and cache creation are input tokens priced apart. */
export function messageUsage(usage: unknown): AIUsage | undefined {
  const u = obj(usage);
  return u ? usageFrom(countsOf(u)) : undefined;
}

/**
 * A messages stream: `message_start` reports the input (and an output of one or so), each
 * `message_delta` the output so far (cumulative); text, thinking and tool input deltas counted.
 */
export class MessagesWatcher implements Watcher<unknown> {
  chars = 0;
  #counts: Counts | undefined;

  see(item: unknown): boolean {
    const event = obj(item);
    switch (event?.type) {
      case 'message_start': {
        const usage = obj(obj(event.message)?.usage);
        if (usage) this.#counts = countsOf(usage);
        break;
      }
      case 'message_delta': {
        const usage = obj(event.usage);
        if (usage) this.#counts = countsOf(usage, this.#counts);
        break;
      }
      case 'content_block_delta': {
        const d = obj(event.delta);
        if (d) this.chars += len(d.text) + len(d.thinking) + len(d.partial_json);
        break;
      }
    }
    return true;
  }

  usage(): AIUsage | undefined {
    return this.#counts && usageFrom(this.#counts);
  }
}

const len = (v: unknown): number => (typeof v === 'string' ? v.length : 0);

/** The characters of output of a whole message (for an estimate when it reports no usage). */
export function messageChars(data: unknown): number {
  const content = obj(data)?.content;
  let chars = 0;
  for (const block of Array.isArray(content) ? content : []) {
    const b = obj(block);
    chars += len(b?.text) + len(b?.thinking);
    if (b?.input !== undefined) chars += len(JSON.stringify(b.input));
  }
  return chars;
}
