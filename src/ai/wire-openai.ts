import { tokens } from './price.js';
import type { Watcher } from './stream.js';
import type { AIUsage } from './types.js';

// The OpenAI wire formats: chat completions and responses, their usage and their streams. Read
// structurally: the `openai` package is never imported.

type Obj = Record<string, unknown> | null | undefined;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined);

/** A chat completion's `usage` (`prompt_tokens` count the cached ones, `completion_tokens` the reasoning ones). */
export function chatUsage(usage: unknown): AIUsage | undefined {
  const u = obj(usage);
  if (!u) return undefined;
  return {
    input: tokens(u.prompt_tokens),
    output: tokens(u.completion_tokens),
    cachedInput: tokens(obj(u.prompt_tokens_details)?.cached_tokens),
    cacheWrite: 0,
    reasoning: tokens(obj(u.completion_tokens_details)?.reasoning_tokens),
  };
}

/** A response's `usage` (Responses API). */
export function responsesUsage(usage: unknown): AIUsage | undefined {
  const u = obj(usage);
  if (!u) return undefined;
  return {
    input: tokens(u.input_tokens),
    output: tokens(u.output_tokens),
    cachedInput: tokens(obj(u.input_tokens_details)?.cached_tokens),
    cacheWrite: 0,
    reasoning: tokens(obj(u.output_tokens_details)?.reasoning_tokens),
  };
}

/** The length of a string, 0 for anything else. */
const len = (v: unknown): number => (typeof v === 'string' ? v.length : 0);

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The characters of output of a whole chat completion (for an estimate when it reports no usage). */
export function chatChars(data: unknown): number {
  let chars = 0;
  for (const choice of list(obj(data)?.choices)) {
    const m = obj(obj(choice)?.message);
    chars += len(m?.content) + len(m?.refusal) + len(m?.reasoning_content);
    for (const c of list(m?.tool_calls)) chars += len(obj(obj(c)?.function)?.arguments);
  }
  return chars;
}

/** The characters of output of a whole response (Responses API). */
export function responsesChars(data: unknown): number {
  let chars = 0;
  for (const item of list(obj(data)?.output)) {
    const i = obj(item);
    chars += len(i?.arguments) + len(i?.input);
    for (const part of [...list(i?.content), ...list(i?.summary)]) {
      const p = obj(part);
      chars += len(p?.text) + len(p?.refusal);
    }
  }
  return chars;
}

/**
 * A chat completion stream: text, refusal, reasoning and tool-call arguments counted; the usage
 * from the chunk that carries it. With `hideUsage` (the meter asked for it, not the caller), the
 * usage-only last chunk (`choices: []`) is kept from the caller, whose code may read `choices[0]`.
 */
export class ChatWatcher implements Watcher<unknown> {
  chars = 0;
  #usage: AIUsage | undefined;
  readonly #hideUsage: boolean;
  /** The choices seen, and those of them finished (`finish_reason`). */
  readonly #choices = new Set<unknown>();
  readonly #finished = new Set<unknown>();

  constructor(hideUsage: boolean) {
    this.#hideUsage = hideUsage;
  }

  see(item: unknown): boolean {
    const chunk = obj(item);
    const usage = chunk?.usage;
    if (usage) this.#usage = chatUsage(usage);
    const choices = chunk?.choices;
    if (!Array.isArray(choices)) return true;
    for (const choice of choices) {
      const index = obj(choice)?.index;
      this.#choices.add(index);
      if (obj(choice)?.finish_reason) this.#finished.add(index);
      const delta = obj(obj(choice)?.delta);
      if (!delta) continue;
      this.chars += len(delta.content) + len(delta.refusal) + len(delta.reasoning_content);
      const calls = delta.tool_calls;
      if (Array.isArray(calls)) for (const c of calls) this.chars += len(obj(obj(c)?.function)?.arguments);
    }
    return !(this.#hideUsage && usage && choices.length === 0);
  }

  usage(): AIUsage | undefined {
    return this.#usage;
  }

  due(): boolean {
    return (
      // The usage chunk is always asked for (by the caller, else by the meter): it follows the last finish.
      !this.#usage && this.#choices.size > 0 && this.#finished.size === this.#choices.size
    );
  }
}

/** The events of a Responses stream whose `delta` is output the caller was sent. */
const OUTPUT_DELTAS = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_text.delta',
  'response.reasoning_summary_text.delta',
  'response.function_call_arguments.delta',
  'response.custom_tool_call_input.delta',
]);

/**
 * A Responses stream: the usage is on the response of its last event, `response.completed`,
 * `response.incomplete` (a length stop: its usage is there, not in a completed) or `response.failed`.
 */
export class ResponsesWatcher implements Watcher<unknown> {
  chars = 0;
  #usage: AIUsage | undefined;

  see(item: unknown): boolean {
    const event = obj(item);
    const type = event?.type;
    if (typeof type !== 'string') return true;
    if (OUTPUT_DELTAS.has(type)) this.chars += len(event?.delta);
    else if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      const usage = obj(event?.response)?.usage;
      if (usage) this.#usage = responsesUsage(usage);
    }
    return true;
  }

  usage(): AIUsage | undefined {
    return this.#usage;
  }
}
