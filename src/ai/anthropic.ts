import type { Calls } from './charge.js';
import { meterClientCall } from './client-call.js';
import { estimateInput } from './price.js';
import { wrapObject } from './proxy.js';
import { MessagesWatcher, messageChars, messageUsage } from './wire-anthropic.js';

type Body = Record<string, unknown>;
type Create = (body: Body, options?: unknown) => PromiseLike<unknown>;

/**
 * A messages resource (`messages`, `beta.messages`) whose `create` is metered; run with the proxy
 * as `this`, its helpers (`stream`, `parse`) reach the metered `create`.
 */
function wrapMessages(messages: object, calls: Calls): unknown {
  return wrapObject(
    messages,
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
  );
}

/**
 * An `@anthropic-ai/sdk` client with the same surface whose `messages.create` and
 * `beta.messages.create` (streamed or not) are metered, and so the helpers that call `this.create`
 * (`messages.stream`, `parse`, `beta.messages.stream`); every other property is the client's own.
 */
export function wrapAnthropic<C extends object>(client: C, calls: Calls): C {
  return wrapObject(client, {
    messages: (messages) => wrapMessages(messages as object, calls),
    beta: (beta) =>
      wrapObject(beta as object, {
        messages: (messages) => wrapMessages(messages as object, calls),
      }),
  });
}
