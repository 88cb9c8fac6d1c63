import { type MockConfig, resolveConfig } from './config.js';
import { registerControl } from './control/register.js';
import { createDispatch, type Dispatch } from './dispatch.js';
import { MockFaults } from './faults.js';
import { createLifecycle, type MockLifecycle } from './lifecycle/lifecycle.js';
import { RecordedRequests } from './requests.js';
import { createRouter } from './router.js';
import { MockStore } from './store.js';
import type { MockOptions } from './types.js';
import { createWebhookChannel, type WebhookChannel } from './webhooks/registry.js';

/** Everything one mock instance owns, shared by the in-process app and the TCP server. */
export interface MockCore {
  config: MockConfig;
  store: MockStore;
  faults: MockFaults;
  requests: RecordedRequests;
  dispatch: Dispatch;
  webhooks: WebhookChannel;
  lifecycle: MockLifecycle;
  reset(): void;
}

/** Creates the state and the request pipeline of one mock. */
export function createMockCore(options: MockOptions = {}): MockCore {
  const config = resolveConfig(options);
  const store = new MockStore({ seed: options.seed ?? 'demo' });
  const faults = new MockFaults({ random: config.random });
  const requests = new RecordedRequests();
  const router = createRouter({ store, config });
  const webhooks = createWebhookChannel({ url: config.webhookUrl, retry: config.webhookRetry });
  const lifecycle = createLifecycle(store, webhooks.send);
  const reset = (): void => {
    store.reset();
    faults.clear();
    requests.clear();
    webhooks.reset();
  };
  registerControl(router, { config, faults, requests, webhooks, lifecycle, reset });
  return {
    config,
    store,
    faults,
    requests,
    dispatch: createDispatch({ router, faults, requests, config }),
    webhooks,
    lifecycle,
    reset,
  };
}
