import * as z from 'zod/mini';
import type { Schema } from '../internal/schema.js';
import type { OpenEnum } from './common.js';

/** Resolve response, shape A: the public URL (it may already carry a `?u=` token). */
export interface ResolvePublicUrlResponse {
  /** The customer-facing URL; it may already carry a `?u=` token, which signing replaces. */
  public_url: string;
}

/** Resolve response, shape B: a redirect. */
export interface ResolveRedirectResponse {
  /** `redirect`, the only value the reference shows (an open enum, so another value still parses). */
  type: OpenEnum<'redirect'>;
  /** The customer-facing URL to redirect to. */
  url: string;
}

/** Either documented resolve shape. */
export type ResolveResponse = ResolvePublicUrlResponse | ResolveRedirectResponse;

/** What `resolve.publicUrl` returns: the URL from either shape, and the response as sent. */
export interface ResolvedUrl {
  /** The customer-facing URL, from `public_url` or `url`. */
  url: string;
  /** The response as sent, for callers that care which shape it was. */
  response: ResolveResponse;
}

/** Validates shape A. */
export const ResolvePublicUrlSchema: Schema<ResolvePublicUrlResponse> = z.looseObject({
  public_url: z.string(),
});

/** Validates shape B. */
export const ResolveRedirectSchema: Schema<ResolveRedirectResponse> = z.looseObject({
  type: z.string(),
  url: z.string(),
});

/** Validates either shape. */
export const ResolveResponseSchema: Schema<ResolveResponse> = z.union([
  ResolvePublicUrlSchema as unknown as z.ZodMiniType<ResolvePublicUrlResponse>,
  ResolveRedirectSchema as unknown as z.ZodMiniType<ResolveRedirectResponse>,
]);
