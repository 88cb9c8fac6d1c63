import type { MockConfig } from '../config.js';
import type { MockFaults } from '../faults.js';
import type { MockLifecycle } from '../lifecycle/lifecycle.js';
import type { RecordedRequests } from '../requests.js';
import type { WebhookChannel } from '../webhooks/registry.js';

/** What the control routes act on: the same handles `startMockServer` gives tests in process. */
export interface ControlContext {
  /** Resolved options; the API key guards the control routes too. */
  config: MockConfig;
  /** Injected failures. */
  faults: MockFaults;
  /** The `/api/` request log. */
  requests: RecordedRequests;
  /** Webhook registration and delivery log. */
  webhooks: WebhookChannel;
  /** Simulated processor events. */
  lifecycle: MockLifecycle;
  /** The mock's full reset (seed, faults, request log, webhooks). */
  reset(): void;
}
