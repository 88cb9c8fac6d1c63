import type { Calls, Charge } from './charge.js';
import { estimateInput } from './price.js';
import { wrapObject } from './proxy.js';
import { chargeWhole, meterReadable } from './stream.js';
import type { AIModelMiddleware } from './types.js';
import { ModelWatcher, modelChars, modelUsage } from './wire-ai-sdk.js';

/** What the meter reads of a call's parameters (`LanguageModelV3CallOptions`). */
interface Params {
  prompt?: unknown;
  tools?: unknown;
  maxOutputTokens?: unknown;
  abortSignal?: AbortSignal | undefined;
}

const modelId = (model: unknown): string => {
  const id = (model as { modelId?: unknown } | null)?.modelId;
  return typeof id === 'string' ? id : 'unknown';
};

function start(calls: Calls, operation: string, model: unknown, params: unknown, streamed: boolean): Charge {
  const p = (params ?? {}) as Params;
  const max = p.maxOutputTokens;
  return calls.start(
    'ai-sdk',
    operation,
    modelId(model),
    streamed,
    typeof max === 'number' && max > 0 ? max : undefined,
    () => estimateInput([p.prompt, p.tools]),
  );
}

/**
 * The AI SDK middleware of a meter: each `doGenerate` and `doStream` is a call, charged as the
 * others are (a tool loop's steps each one).
 */
export function metering(calls: Calls): AIModelMiddleware {
  return {
    specificationVersion: 'v3',
    async wrapGenerate({ doGenerate, params, model }) {
      const charge = start(calls, 'doGenerate', model, params, false);
      await charge.begin();
      let result: unknown;
      try {
        result = await doGenerate();
      } catch (error) {
        await charge.fail();
        throw error;
      }
      const usage = modelUsage((result as { usage?: unknown } | null)?.usage);
      await chargeWhole(charge, usage, usage ? 0 : modelChars(result));
      return result as never;
    },
    async wrapStream({ doStream, params, model }) {
      const charge = start(calls, 'doStream', model, params, true);
      await charge.begin();
      let result: { stream: ReadableStream<unknown> };
      try {
        result = (await doStream()) as { stream: ReadableStream<unknown> };
      } catch (error) {
        await charge.fail();
        throw error;
      }
      const signal = (params as Params | null)?.abortSignal;
      const stream = meterReadable(result.stream, new ModelWatcher(), charge, () => signal?.aborted === true);
      return { ...result, stream } as never;
    },
  };
}

/** A language model with the same surface whose `doGenerate` and `doStream` go through {@link metering}. */
export function wrapModel<M extends object>(model: M, calls: Calls): M {
  const mw = metering(calls);
  const m = model as {
    doGenerate: (p: unknown) => PromiseLike<unknown>;
    doStream: (p: unknown) => PromiseLike<unknown>;
  };
  const run = (params: unknown) => ({
    doGenerate: () => m.doGenerate(params),
    doStream: () => m.doStream(params),
    params,
    model,
  });
  return wrapObject(model, {
    doGenerate: () => (params: unknown) => mw.wrapGenerate(run(params)),
    doStream: () => (params: unknown) => mw.wrapStream(run(params)),
  });
}
