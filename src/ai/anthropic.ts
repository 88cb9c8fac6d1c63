import type { Calls } from './charge.js';
import { meterClientCall } from './client-call.js';
import { estimateInput } from './price.js';
import { wrapObject } from './proxy.js';
import { MessagesWatcher, messageChars, messageUsage } from './wire-anthropic.js';

type Body = Record<string, unknown>;
type Create = (body: Body, options?: unknown) => PromiseLike<unknown>;

/**
 * An `@anthropic-ai/sdk` client with the same surface whose `messages.create` (streamed or not) is
 * metered, and so `messages.stream`, which the client builds on `this.create`; every other property
 * is the client's own.
 */
export function wrapAnthropic<C extends object>(client: C, calls: Calls): C {
  return wrapObject(client, {
    messages: (messages) =>
      wrapObject(
        messages as object,
        {
          create: (create) => (body: Body, options?: unknown) => {
            if (body === null || typeof body !== 'object')
              return (create as Create).call(messages, body, options);
            const streamed = body.stream === true;
            const max = body.max_tokens;
            const charge = calls.start(
              'anthropic',
              'messages.create',
              String(body.model),
              streamed,
              typeof max === 'number' && max > 0 ? max : undefined,
              () => estimateInput([body.messages, body.system, body.tools]),
            );
            return meterClientCall(
              charge,
              streamed,
              { usage: messageUsage, chars: messageChars, watcher: () => new MessagesWatcher() },
              () => (create as Create).call(messages, body, options),
            );
          },
        },
        true,
      ),
  });
}
