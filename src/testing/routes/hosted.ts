import type { Hono } from 'hono';
import { jwtVerify } from 'jose';
import { errorResponse, json } from '../errors.js';
import { pathSegment, queryOf, type RouteContext } from './context.js';

/**
 * Verifies the `u` token of a hosted page as the service does: HS256 only, signed with the
 * signing key, carrying a string `account_ref_id`. Returns the account or undefined.
 */
async function verifyToken(token: string | null, signingKey: string): Promise<string | undefined> {
  if (!token) return undefined;
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(signingKey), {
      algorithms: ['HS256'],
    });
    return typeof payload.account_ref_id === 'string' ? payload.account_ref_id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Hosted pages outside `/api/`: `/p/<product_url_id>` and `/t/<tier_url_id>` check the signed
 * link end to end; `/i/<processor_invoice_id>` stands in for a processor's hosted invoice page.
 * They answer JSON so that tests can assert on what the page saw.
 */
export function registerHostedPages(app: Hono, { store, config }: RouteContext): void {
  const page = (kind: 'product' | 'tier') => async (c: { req: { url: string } }) => {
    const id = pathSegment(c.req.url, 2);
    const known =
      kind === 'product'
        ? store.products().some((p) => p.product_url_id === id)
        : store.tiers().some((t) => t.tier_url_id === id);
    if (!known)
      return errorResponse(404, kind === 'product' ? 'Product not found' : 'Subscription tier not found');
    const accountRefId = await verifyToken(queryOf(c.req.url).get('u'), config.signingKey);
    if (accountRefId === undefined) return errorResponse(401, 'invalid token');
    return json({ ok: true, account_ref_id: accountRefId, page: kind, id });
  };
  app.get('/p/:id', page('product'));
  app.get('/t/:id', page('tier'));

  app.get('/i/:id', (c) => {
    const invoice = store.invoice(pathSegment(c.req.url, 2));
    if (!invoice) return errorResponse(404, 'Invoice not found');
    return json({
      ok: true,
      page: 'invoice',
      id: invoice.processor_invoice_id,
      status: invoice.status,
      amount_due: invoice.amount_due,
      currency: invoice.currency,
    });
  });
}
