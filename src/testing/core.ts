import { type MockConfig, resolveConfig } from './config.js';
import { createDispatch, type Dispatch } from './dispatch.js';
import { MockFaults } from './faults.js';
import { RecordedRequests } from './requests.js';
import { createRouter } from './router.js';
import { MockStore } from './store.js';
import type { MockOptions } from './types.js';

/** Everything one mock instance owns, shared by the in-process app and the TCP server. */
export interface MockCore {
  config: MockConfig;
  store: MockStore;
  faults: MockFaults;
  requests: RecordedRequests;
  dispatch: Dispatch;
  reset(): void;
}

/** Creates the state and the request pipeline of one mock. */
export function createMockCore(options: MockOptions = {}): MockCore {
  const config = resolveConfig(options);
  const store = new MockStore({ seed: options.seed ?? 'demo' });
  const faults = new MockFaults();
  const requests = new RecordedRequests();
  const router = createRouter({ store, config });
  return {
    config,
    store,
    faults,
    requests,
    dispatch: createDispatch({ router, faults, requests, config }),
    reset() {
      store.reset();
      faults.clear();
      requests.clear();
    },
  };
}
