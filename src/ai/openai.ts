import { InvalidRequestError } from '../core/errors/index.js';
import type { Calls } from './charge.js';
import { meterClientCall } from './client-call.js';
import { estimateInput } from './price.js';
import { wrapObject } from './proxy.js';
import {
  ChatWatcher,
  chatChars,
  chatUsage,
  ResponsesWatcher,
  responsesChars,
  responsesUsage,
} from './wire-openai.js';

type Body = Record<string, unknown>;
type Create = (body: Body, options?: unknown) => PromiseLike<unknown>;

const num = (v: unknown): number | undefined => (typeof v === 'number' && v > 0 ? v : undefined);
const isBody = (v: unknown): v is Body => v !== null && typeof v === 'object';

/** `chat.completions.create`, metered: streamed ones ask for the usage chunk when the caller did not, and hide it then. */
function chatCreate(create: Create, self: unknown, calls: Calls): Create {
  return (body, options) => {
    if (!isBody(body)) return create.call(self, body, options);
    const streamed = body.stream === true;
    const so = isBody(body.stream_options) ? body.stream_options : undefined;
    const hideUsage = streamed && so?.include_usage !== true;
    const sent = hideUsage ? { ...body, stream_options: { ...so, include_usage: true } } : body;
    const charge = calls.start(
      'openai',
      'chat.completions.create',
      String(body.model),
      streamed,
      num(body.max_completion_tokens) ?? num(body.max_tokens),
      () => estimateInput([body.messages, body.tools]),
    );
    return meterClientCall(
      charge,
      streamed,
      { usage: chatUsage, chars: chatChars, watcher: () => new ChatWatcher(hideUsage), done: '[DONE]' },
      () => create.call(self, sent, options),
    );
  };
}

/** `responses.create`, metered: the usage from the response, or from the stream's last event. */
function responsesCreate(create: Create, self: unknown, calls: Calls): Create {
  return (body, options) => {
    if (!isBody(body)) return create.call(self, body, options);
    // Answered at once, queued: its usage comes with a later retrieve the meter never sees.
    if (body.background === true) {
      return Promise.reject(
        new InvalidRequestError('responses.create', [
          {
            field: 'background',
            message:
              'cannot be metered (the response is answered queued, its usage known only later): make the call in the foreground, streamed or not',
          },
        ]),
      );
    }
    const streamed = body.stream === true;
    const charge = calls.start(
      'openai',
      'responses.create',
      String(body.model),
      streamed,
      num(body.max_output_tokens),
      () => estimateInput([body.input, body.instructions, body.tools]),
    );
    return meterClientCall(
      charge,
      streamed,
      { usage: responsesUsage, chars: responsesChars, watcher: () => new ResponsesWatcher() },
      () => create.call(self, body, options),
    );
  };
}

/**
 * An `openai` client with the same surface whose `chat.completions.create` and `responses.create`
 * are metered, and so the helpers that call them (`chat.completions.stream`, `parse`, `runTools`,
 * `responses.stream`, `parse`); every other property is the client's own.
 */
export function wrapOpenAI<C extends object>(client: C, calls: Calls): C {
  // The helpers call `this._client.chat.completions.create` (or `.responses.create`): run with the
  // resource's proxy as `this`, they find the metered client there, not the one they were made with.
  const metered: C = wrapObject(client, {
    chat: (chat) =>
      wrapObject(chat as object, {
        completions: (completions) =>
          wrapObject(
            completions as object,
            {
              create: (create) => chatCreate(create as Create, completions, calls),
              _client: () => metered,
            },
            true,
          ),
      }),
    responses: (responses) =>
      wrapObject(
        responses as object,
        {
          create: (create) => responsesCreate(create as Create, responses, calls),
          _client: () => metered,
        },
        true,
      ),
  });
  return metered;
}
