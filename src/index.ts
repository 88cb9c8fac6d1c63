/**
 * billing-sdk: the TypeScript client of the Billing Service API v1. Runs wherever `fetch` and
 * WebCrypto exist: Node 20+, Deno, Bun, edge workers and browsers.
 *
 * @module billing-sdk
 */
export {
  type AccessAnswerSource,
  type AccessCache,
  type AccessCacheStats,
  type AccessLookupOptions,
  type AccessLookupOutcome,
  type AccessLookups,
  createAccessCache,
  type PreparedAccessLookup,
} from './access/cache.js';
export type { AccessCacheOptions } from './access/options.js';
export type { AccessStore, AccessStoreRead, SharedAccessAnswer } from './access/store.js';
export { BillingClient } from './client.js';
export { APIPromise, type APIResponseInfo, type WithResponse } from './core/api-promise.js';
export { type Cooldown, type CooldownGrant, MAX_COOLDOWN_MS, memoryCooldown } from './core/cooldown.js';
export type {
  AccessEvent,
  AIEvent,
  AttemptTrace,
  CreditsEvent,
  GateEvent,
  RequestTrace,
  TrackerEvent,
} from './core/diagnostics.js';
// Every error class, its name and its types: core/errors/index.ts exports nothing else (its names.ts and table.ts hold the names).
export * from './core/errors/index.js';
export type { Logger, LogLevel } from './core/logger.js';
export type { AuthHeader, ClientOptions, FetchLike, RequestOptions, ValidationMode } from './core/options.js';
export { Page, PagePromise, type WalkOptions } from './core/pagination.js';
// The gate: a route's subscription, entitlement, credits and usage as one decision, with the paywall as its "no".
export { createCreditHolds } from './credits/holds.js';
export { type MemoryHoldStoreOptions, memoryHoldStore } from './credits/memory-store.js';
export type { HoldLedger, HoldRequest, HoldStore, HoldStoreFree, HoldStoreReserve } from './credits/store.js';
export type {
  CreditHold,
  CreditHoldStats,
  CreditHolds,
  CreditHoldsOptions,
  HoldExtendResult,
  ReserveParams,
  ReserveResult,
} from './credits/types.js';
export { createGate } from './gate/gate.js';
export type {
  GateAnswer,
  GateIdempotency,
  GateIdempotencyOptions,
  GateReplayOptions,
} from './gate/idempotency-types.js';
export type {
  AccountState,
  AccountStateFeature,
  AccountStateHandler,
  AccountStateMeter,
  AccountStateStats,
  AccountStateStreamOptions,
  AccountStateView,
  StateFastifyReply,
  StateNodeResponse,
} from './gate/state-types.js';
export type {
  CreditsNeed,
  EntitlementNeed,
  FastifyReplyLike,
  FetchHandler,
  Gate,
  GateAllowed,
  GateDecision,
  GateDenialReason,
  GateDenied,
  GateHold,
  GateNeed,
  GateNeeds,
  GateOptions,
  GatePaywall,
  GateQuantity,
  GateRequest,
  GateSource,
  HonoContextLike,
  HonoMiddleware,
  NodeMiddleware,
  NodeResponseLike,
  PaywallTarget,
  SubscriptionNeed,
  UsageNeed,
} from './gate/types.js';
export { type HostedLinkTarget, type SignHostedLinkParams, signHostedLink } from './links/sign.js';
export { type HostedLinkClaims, type VerifiedHostedLink, verifyHostedLink } from './links/verify.js';
export type { AccountStatusParams, Accounts, FixSubscriptionParams } from './resources/accounts.js';
export type { EntitlementCheckParams, Entitlements } from './resources/entitlements.js';
export type { InvoiceCreateParams, InvoiceListParams, Invoices } from './resources/invoices.js';
export type { Products } from './resources/products.js';
export type { Resolve, ResolveParams, SignedUrlOptions } from './resources/resolve.js';
export type { TierListParams, Tiers } from './resources/tiers.js';
export type { TransactionListParams, Transactions } from './resources/transactions.js';
export type {
  MeterParams,
  RecordManyOptions,
  RecordManyResult,
  Usage,
  UsageSummaryParams,
  UsageWriteParams,
} from './resources/usage.js';
// Response types are the public contract; the schema objects that check them stay internal.
export {
  type AccountStatus,
  type AccountStatusMultiple,
  type AccountStatusSingle,
  type AccountSubscription,
  isMultipleStatus,
  subscriptionsOf,
} from './schemas/account-status.js';
export type { OpenEnum } from './schemas/common.js';
export type { CreatedInvoice } from './schemas/created-invoice.js';
export type { EntitlementCheck } from './schemas/entitlement.js';
export type { FixSubscriptionResult } from './schemas/fix-subscription.js';
export { INVOICE_STATUSES, type Invoice, type InvoiceStatus } from './schemas/invoice.js';
export type { Product } from './schemas/product.js';
export type {
  ResolvedUrl,
  ResolvePublicUrlResponse,
  ResolveRedirectResponse,
  ResolveResponse,
} from './schemas/resolve.js';
export { type SubscriptionTier, tierFeatures } from './schemas/tier.js';
export { TRANSACTION_STATUSES, type Transaction, type TransactionStatus } from './schemas/transaction.js';
export type {
  CreditBalance,
  DebitApproved,
  DebitRefused,
  DebitResult,
  UsageErrorCode,
  UsageEventAccepted,
  UsageEventRefused,
  UsageEventResult,
  UsageSummary,
} from './schemas/usage.js';
export type { WebhookEvent, WebhookEventName } from './schemas/webhook.js';
export { type DeadLetters, deadLetters } from './tracker/dead-letters.js';
// The usage tracker: createUsageTracker, its spool contract and the in-memory spool.
export { memorySpool } from './tracker/memory-spool.js';
export type { DeadLetterReason, UsageTrackerOptions } from './tracker/options.js';
export type {
  DeadLetter,
  DeadLetterCause,
  DeadLetterEntry,
  Spool,
  SpoolEntry,
  SpooledEvent,
} from './tracker/spool.js';
export { createUsageTracker } from './tracker/tracker.js';
export type {
  TrackerCloseOptions,
  TrackerCloseResult,
  TrackerStats,
  TrackOptions,
  UsageTracker,
} from './tracker/types.js';
export { VERSION } from './version.js';
export type {
  ClaimOutcome,
  DedupeStore,
  TransactionOutcome,
  WebhookEventContext,
} from './webhooks/dedupe.js';
export { createWebhookHandler } from './webhooks/fetch-handler.js';
export type { WebhookHandlerOptions } from './webhooks/handle.js';
export { type MemoryDedupeOptions, memoryDedupeStore } from './webhooks/memory-dedupe.js';
export {
  createNodeWebhookHandler,
  type NodeWebhookRequest,
  type NodeWebhookResponse,
} from './webhooks/node-handler.js';
export { parseWebhook } from './webhooks/parse.js';
