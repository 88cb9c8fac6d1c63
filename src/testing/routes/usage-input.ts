import type { UsageFields } from '../records.js';
import {
  type BodyResult,
  bodyNumber,
  bodyObject,
  bodyString,
  FieldErrors,
  POSITIVE_INTEGER,
  readJsonObject,
} from '../validation.js';

/** Query of the per-meter reads (`credits/balance`, `summary`); their answers echo it in this order. */
export const METER_QUERY = ['account_ref_id', 'product_code', 'meter_code'] as const;

/** Parses and validates a debit or event body; every violation is listed in one 400. */
export async function readUsageRequest(
  request: Request,
): Promise<{ ok: true; value: UsageFields } | Extract<BodyResult, { ok: false }>> {
  const parsed = await readJsonObject(request);
  if (!parsed.ok) return parsed;
  const { body } = parsed;
  const errors = new FieldErrors();
  const accountRefId = bodyString(body, 'account_ref_id', errors, true);
  const productCode = bodyString(body, 'product_code', errors, true);
  const meterCode = bodyString(body, 'meter_code', errors, true);
  const quantity = bodyNumber(body, 'quantity', errors, POSITIVE_INTEGER);
  const eventKey = bodyString(body, 'event_key', errors, true);
  const metadata = bodyObject(body, 'metadata', errors);
  if (
    !errors.empty ||
    accountRefId === undefined ||
    productCode === undefined ||
    meterCode === undefined ||
    quantity === undefined ||
    eventKey === undefined
  ) {
    return { ok: false, response: errors.toResponse() };
  }
  return {
    ok: true,
    value: {
      account_ref_id: accountRefId,
      product_code: productCode,
      meter_code: meterCode,
      quantity,
      event_key: eventKey,
      metadata,
    },
  };
}
