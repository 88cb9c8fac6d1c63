import {
  type BodyResult,
  bodyObject,
  bodyPositiveInteger,
  bodyString,
  FieldErrors,
  readJsonObject,
} from '../validation.js';

/** The body shared by `usage/credits/debit/` and `usage/events/`, validated. */
export interface UsageRequest {
  account_ref_id: string;
  product_code: string;
  meter_code: string;
  quantity: number;
  event_key: string;
  metadata: Record<string, unknown> | null;
}

/** Parses and validates a debit or event body; every violation is listed in one 400. */
export async function readUsageRequest(
  request: Request,
): Promise<{ ok: true; value: UsageRequest } | Extract<BodyResult, { ok: false }>> {
  const parsed = await readJsonObject(request);
  if (!parsed.ok) return parsed;
  const { body } = parsed;
  const errors = new FieldErrors();
  const accountRefId = bodyString(body, 'account_ref_id', errors, true);
  const productCode = bodyString(body, 'product_code', errors, true);
  const meterCode = bodyString(body, 'meter_code', errors, true);
  const quantity = bodyPositiveInteger(body, 'quantity', errors);
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
