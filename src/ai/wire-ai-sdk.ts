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
