/**
 * billing-sdk: the TypeScript client of the Billing Service API v1. Runs wherever `fetch` and
 * WebCrypto exist: Node 20+, Deno, Bun, edge workers and browsers.
 *
 * @packageDocumentation
 */
export { BillingClient } from './client.js';
export {
  APIConnectionError,
  APIError,
  type APIErrorName,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  BillingError,
  type BillingErrorName,
  ConflictError,
  HostedLinkError,
  type HostedLinkErrorCode,
  InternalServerError,
  InvalidRequestError,
  type InvalidRequestIssue,
  NotFoundError,
  PaginationError,
  PermissionDeniedError,
  RateLimitError,
  type RequestContext,
  ResponseValidationError,
  UnprocessableEntityError,
  type ValidationIssue,
  WebhookError,
} from './core/errors.js';
export type { Logger, LogLevel } from './core/logger.js';
export type { AuthHeader, ClientOptions, FetchLike, RequestOptions, ValidationMode } from './core/options.js';
export { Page, PagePromise } from './core/pagination.js';
export type { SafeParseResult, Schema, SchemaIssue } from './core/schema.js';
export { type HostedLinkTarget, type SignHostedLinkParams, signHostedLink } from './links/sign.js';
export { type HostedLinkClaims, type VerifiedHostedLink, verifyHostedLink } from './links/verify.js';
export type { AccountStatusParams, Accounts, FixSubscriptionParams } from './resources/accounts.js';
export type { EntitlementCheckParams, Entitlements } from './resources/entitlements.js';
export type { InvoiceCreateParams, InvoiceListParams, Invoices } from './resources/invoices.js';
export type { Products } from './resources/products.js';
export type { Resolve, ResolveParams, SignedUrlOptions } from './resources/resolve.js';
export type { TierListParams, Tiers } from './resources/tiers.js';
export type { TransactionListParams, Transactions } from './resources/transactions.js';
export type { MeterParams, Usage, UsageSummaryParams, UsageWriteParams } from './resources/usage.js';
export {
  type AccountStatus,
  type AccountStatusMultiple,
  AccountStatusMultipleSchema,
  AccountStatusSchema,
  type AccountStatusSingle,
  AccountStatusSingleSchema,
  type AccountSubscription,
  isMultipleStatus,
  subscriptionsOf,
} from './schemas/account-status.js';
export type { OpenEnum } from './schemas/common.js';
export { type CreatedInvoice, CreatedInvoiceSchema } from './schemas/created-invoice.js';
export { type EntitlementCheck, EntitlementCheckSchema } from './schemas/entitlement.js';
export { type FixSubscriptionResult, FixSubscriptionSchema } from './schemas/fix-subscription.js';
export { INVOICE_STATUSES, type Invoice, InvoiceSchema, type InvoiceStatus } from './schemas/invoice.js';
export { type Product, ProductSchema } from './schemas/product.js';
export {
  type ResolvedUrl,
  type ResolvePublicUrlResponse,
  ResolvePublicUrlSchema,
  type ResolveRedirectResponse,
  ResolveRedirectSchema,
  type ResolveResponse,
  ResolveResponseSchema,
} from './schemas/resolve.js';
export { type SubscriptionTier, SubscriptionTierSchema, tierFeatures } from './schemas/tier.js';
export {
  TRANSACTION_STATUSES,
  type Transaction,
  TransactionSchema,
  type TransactionStatus,
} from './schemas/transaction.js';
export {
  type CreditBalance,
  CreditBalanceSchema,
  type DebitApproved,
  type DebitRefused,
  DebitResponseSchema,
  type DebitResult,
  type UsageErrorCode,
  type UsageEventAccepted,
  type UsageEventRefused,
  UsageEventResponseSchema,
  type UsageEventResult,
  type UsageSummary,
  UsageSummarySchema,
} from './schemas/usage.js';
export { type WebhookEvent, type WebhookEventName, WebhookEventSchema } from './schemas/webhook.js';
export { type DedupeStore, memoryDedupeStore } from './webhooks/dedupe.js';
export { createWebhookHandler } from './webhooks/fetch-handler.js';
export type { WebhookHandlerOptions } from './webhooks/handle.js';
export {
  createNodeWebhookHandler,
  type NodeWebhookRequest,
  type NodeWebhookResponse,
} from './webhooks/node-handler.js';
export { parseWebhook } from './webhooks/parse.js';
