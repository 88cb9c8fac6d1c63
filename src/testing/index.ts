/**
 * `billing-sdk/testing`: a stateful in-memory mock of the Billing Service API for tests, examples
 * and demos. Node only. Nothing here is needed at run time by the SDK itself.
 *
 * @module billing-sdk/testing
 */

export { createMockApp } from './app.js';
export { NOT_FOUND_MESSAGE } from './errors.js';
export type { Fault, MockFaultsOptions } from './faults.js';
export { MockFaults } from './faults.js';
export type { MockLifecycle } from './lifecycle/lifecycle.js';
export type { MockLifecycleParams } from './lifecycle/target.js';
export { seededRandom } from './random.js';
export type {
  AccountInput,
  AccountRecord,
  InvoiceInput,
  InvoiceRecord,
  InvoiceStatus,
  LedgerEntry,
  ProductRecord,
  SubscriptionInput,
  SubscriptionRecord,
  TierRecord,
  TransactionInput,
  TransactionRecord,
  TransactionStatus,
  UsageEventInput,
  UsageEventRecord,
  UsageFields,
  UsageModel,
} from './records.js';
export { INVOICE_STATUSES, POSTPAID_USAGE_MODELS, TRANSACTION_STATUSES } from './records.js';
export { REQUEST_ID_HEADER } from './request-id.js';
export type { RecordedRequest, RequestFilter } from './requests.js';
export { RecordedRequests } from './requests.js';
export { RESOLVE_ERRORS } from './routes/resolve.js';
export type { SeedName } from './seed.js';
export { DEMO } from './seed.js';
export { startMockServer } from './server.js';
export type { InvoiceFilter, MockStoreOptions, TimeRange } from './store.js';
export { MockStore } from './store.js';
export type { MockApp, MockFetch, MockOptions, MockServer, MockServerOptions } from './types.js';
export type { MockWebhookRetry, WebhookAttempt, WebhookDelivery } from './webhooks/deliver.js';
export type { MockLifecycleEvent, MockWebhookPayload } from './webhooks/payload.js';
export { LIFECYCLE_EVENTS } from './webhooks/payload.js';
export type { MockWebhooks } from './webhooks/registry.js';
