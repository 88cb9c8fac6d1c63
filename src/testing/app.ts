import { abortReason, untilSignal } from '../util/signals.js';
import { createMockCore } from './core.js';
import type { Connection } from './dispatch.js';
import { decodeContent } from './encoding.js';
import type { MockApp, MockOptions } from './types.js';

/** What undici reports when the other side closes the socket; clients look for these. */
function connectionReset(): TypeError {
  const cause = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
  return new TypeError('fetch failed', { cause });
}

/** Without a socket, a reset or an abort can only be reported by rejecting the fetch call. */
const inProcess: Connection = {
  reset() {
    throw connectionReset();
  },
  aborted(signal) {
    throw abortReason(signal);
  },
};

/**
 * An in-process mock of the API: pass `app.fetch` as a client's `fetch` to test without a port.
 * Works under any origin (e.g. `http://127.0.0.1/api/`): links are built from the request URL
 * unless `options.appUrl` is set.
 */
export function createMockApp(options: MockOptions = {}): MockApp {
  const core = createMockCore(options);
  return {
    fetch: (input, init) => {
      let request: Request;
      try {
        request = new Request(input, init);
      } catch (error) {
        return Promise.reject(error);
      }
      // The caller's own signal, held strongly (see Dispatch); a signal-less call never aborts.
      const signal =
        init?.signal ?? (input instanceof Request ? input.signal : undefined) ?? new AbortController().signal;
      // Settles with the answer, or rejects with the abort reason first, as a real fetch does.
      return untilSignal(core.dispatch(request, inProcess, signal).then(decodeContent), signal, () =>
        abortReason(signal),
      );
    },
    store: core.store,
    faults: core.faults,
    requests: core.requests,
    webhooks: core.webhooks.api,
    lifecycle: core.lifecycle,
    apiKey: core.config.apiKey,
    signingKey: core.config.signingKey,
    reset: core.reset,
  };
}
