import { tokens } from './price.js';
import type { Watcher } from './stream.js';
import type { AIUsage } from './types.js';

// The AI SDK's language model results (specification v2 and v3), their usage and their stream
// parts. Read structurally: `ai` and `@ai-sdk/provider` are never imported.

type Obj = Record<string, unknown> | undefined;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined);

/**
 * A model's usage: v3 reports `{ inputTokens: { total, noCache, cacheRead, cacheWrite },
 * outputTokens: { total, text, reasoning } }`, v2 numbers (`inputTokens`, `outputTokens`,
 * `cachedInputTokens`, `reasoningTokens`).
 */
export function modelUsage(usage: unknown): AIUsage | undefined {
  const u = obj(usage);
  if (!u) return undefined;
  const input = u.inputTokens;
  const output = u.outputTokens;
  if (typeof input !== 'object' || input === null) {
    // No count at all: the model reported nothing (an estimate charges it, not 0).
    if (typeof input !== 'number' && typeof output !== 'number') return undefined;
    return {
      input: tokens(input),
      output: tokens(output),
      cachedInput: tokens(u.cachedInputTokens),
      cacheWrite: 0,
      reasoning: tokens(u.reasoningTokens),
    };
  }
  const i = input as Record<string, unknown>;
  const o = obj(output) ?? {};
  const counts = [i.total, i.noCache, i.cacheRead, i.cacheWrite, o.total, o.text, o.reasoning];
  if (!counts.some((v) => typeof v === 'number')) return undefined;
  const cachedInput = tokens(i.cacheRead);
  const cacheWrite = tokens(i.cacheWrite);
  const reasoning = tokens(o.reasoning);
  return {
    input: i.total != null ? tokens(i.total) : tokens(i.noCache) + cachedInput + cacheWrite,
    output: o.total != null ? tokens(o.total) : tokens(o.text) + reasoning,
    cachedInput,
    cacheWrite,
    reasoning,
  };
}

/** The characters of output of a whole `doGenerate` result (for an estimate when it reports no usage). */
export function modelChars(result: unknown): number {
  const content = obj(result)?.content;
  let chars = 0;
  for (const part of Array.isArray(content) ? content : []) {
    const p = obj(part);
    if (typeof p?.text === 'string') chars += p.text.length;
    if (typeof p?.input === 'string') chars += p.input.length;
  }
  return chars;
}

/** The parts whose `delta` is output: text, reasoning, a tool call's input. */
const DELTAS = new Set(['text-delta', 'reasoning-delta', 'tool-input-delta']);

/** A model's stream: deltas counted, the usage from its `finish` part. */
export class ModelWatcher implements Watcher<unknown> {
  chars = 0;
  #usage: AIUsage | undefined;

  see(item: unknown): boolean {
    const part = obj(item);
    const type = part?.type;
    if (typeof type === 'string' && DELTAS.has(type)) {
      const d = part?.delta ?? part?.textDelta;
      if (typeof d === 'string') this.chars += d.length;
    } else if (type === 'finish') {
      this.#usage = modelUsage(part?.usage);
    }
    return true;
  }

  usage(): AIUsage | undefined {
    return this.#usage;
  }
}
