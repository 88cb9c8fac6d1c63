import { InvalidRequestError } from '../core/errors/index.js';
import type { AICallInfo, AIPrice, AIUsage } from './types.js';

/** No token at all. */
export const NO_USAGE: Readonly<AIUsage> = Object.freeze({
  input: 0,
  output: 0,
  cachedInput: 0,
  cacheWrite: 0,
  reasoning: 0,
});

/** A usage of `input` and `output` tokens, nothing cached nor reasoned. */
export const usageOf = (input: number, output: number): AIUsage => ({ ...NO_USAGE, input, output });

/** Whether a usage has any token. */
export const anyTokens = (u: AIUsage): boolean => u.input > 0 || u.output > 0;

/**
 * A count the provider reported, or 0: a missing, negative or non-finite one never turns into a
 * charge (or a NaN in a sum).
 */
export const tokens = (v: unknown): number => (typeof v === 'number' && v > 0 && Number.isFinite(v) ? v : 0);

/**
 * What a call costs, in the meter's units: the sum of its tokens at their prices (or the price
 * function's answer), rounded up. A price function answering something other than a non-negative
 * finite number is the meter's misconfiguration: it throws an `InvalidRequestError` naming `price`,
 * and the caller reports it.
 */
export function costOf(price: AIPrice, usage: AIUsage, call: AICallInfo): number {
  let sum: number;
  if (typeof price === 'function') {
    sum = price(usage, call);
    if (typeof sum !== 'number' || !(sum >= 0) || !Number.isFinite(sum)) {
      throw new InvalidRequestError(call.operation, [
        { field: 'price', message: `(usage, call) answered ${String(sum)}: it must be a finite number >= 0` },
      ]);
    }
  } else {
    const plain = Math.max(0, usage.input - usage.cachedInput - usage.cacheWrite);
    const text = Math.max(0, usage.output - usage.reasoning);
    sum =
      plain * price.input +
      usage.cachedInput * (price.cachedInput ?? price.input) +
      usage.cacheWrite * (price.cacheWrite ?? price.input) +
      text * price.output +
      usage.reasoning * (price.reasoning ?? price.output);
  }
  // 1e-9 absorbs float noise (0.1 + 0.2), so 3 tokens at 0.1 cost 1, not 2... of 0.30000000000000004;
  // a sum above 0 costs 1 at least: the noise allowance never rounds tokens used down to free.
  return sum > 0 ? Math.max(1, Math.ceil(sum - 1e-9)) : 0;
}

/** Characters per token when estimating: the usual rule of thumb for English text and JSON. */
const CHARS_PER_TOKEN = 4;

/** Tokens that `chars` characters of text are estimated to be: never 0 for some text. */
export const estimateTokens = (chars: number): number => (chars > 0 ? Math.ceil(chars / CHARS_PER_TOKEN) : 0);

/**
 * Binary data sent as text: a data URL, or a long run of base64 without a space (an image's or a
 * file's bytes). The provider bills such parts by what they are (an image's tiles), never by their
 * encoded length: counted as text they would make an estimate hundreds of times too high.
 */
const isEncodedData = (s: string): boolean =>
  s.startsWith('data:') || (s.length > 256 && /^[A-Za-z0-9+/_-]+=*$/.test(s));

/**
 * The input tokens a request is estimated to hold: the characters of every string in its prompt
 * parts (messages, input, system, instructions, prompt, tools), without serialising the request;
 * binary data (images, files) is left out.
 */
export function estimateInput(parts: readonly unknown[]): number {
  let chars = 0;
  const stack = [...parts];
  // A bound on the walk: a prompt is a tree of a few thousand nodes at most; a cycle ends here.
  for (let seen = 0; stack.length && seen < 100_000; seen++) {
    const v = stack.pop();
    if (typeof v === 'string') chars += isEncodedData(v) ? 0 : v.length;
    else if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === 'object' && !ArrayBuffer.isView(v)) stack.push(...Object.values(v));
  }
  return estimateTokens(chars);
}
