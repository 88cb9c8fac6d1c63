/**
 * Response helpers for the reference's error bodies. Centralised so that every route answers the
 * exact same shapes and messages (SDK tests assert on them).
 */

/** The 404 message the reference documents for unknown accounts and tiers. */
export const NOT_FOUND_MESSAGE = 'Account not found or invalid subscription tier';

/** Field-level messages, worded like the Django REST framework the service appears to use. */
export const MESSAGES = {
  required: 'This field is required.',
  blank: 'This field may not be blank.',
  integer: 'A valid integer is required.',
  number: 'A valid number is required.',
  boolean: 'Must be a valid boolean.',
  string: 'Not a valid string.',
  object: 'Expected a JSON object.',
  email: 'Enter a valid email address.',
  url: 'Enter a valid URL.',
  currency: 'Enter a lowercase ISO 4217 currency code.',
  minOne: 'Ensure this value is greater than or equal to 1.',
  maxPageSize: 'Ensure this value is less than or equal to 100.',
  positive: 'Ensure this value is greater than 0.',
  datetime:
    'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
  productNotFound: 'Product not found.',
  invalidJson: 'Invalid JSON.',
  notAnObject: 'Invalid data. Expected a dictionary.',
  /** A DRF-style "not a valid choice" message for enum filters. */
  choice: (value: string): string => `"${value}" is not a valid choice.`,
} as const;

/** A JSON response; every API body, error or not, carries `application/json`. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** 400 with the reference's field map `{ "<field>": ["<message>"] }`. */
export function fieldErrors(fields: Record<string, string[]>): Response {
  return json(fields, 400);
}

/** 400 for a POST body that is not JSON at all. */
export function invalidJson(): Response {
  return fieldErrors({ non_field_errors: [MESSAGES.invalidJson] });
}

/** An `{ "error": message }` body, the shape of the reference's 404 and of resolve's errors. */
export function errorResponse(status: number, message: string): Response {
  return json({ error: message }, status);
}

/** The reference's 404 for unknown accounts and invalid subscription tiers. */
export function notFound(message: string = NOT_FOUND_MESSAGE): Response {
  return errorResponse(404, message);
}

/** The reference's 401; `WWW-Authenticate` tells generic HTTP clients which scheme is expected. */
export function unauthorized(): Response {
  return json({ detail: 'Invalid API key' }, 401, { 'www-authenticate': 'Bearer' });
}

/** Unknown route under `/api/` (the reference does not document it; DRF's wording). */
export function routeNotFound(): Response {
  return json({ detail: 'Not found.' }, 404);
}

/** Known route, wrong method (DRF's wording). */
export function methodNotAllowed(method: string): Response {
  return json({ detail: `Method "${method}" not allowed.` }, 405);
}

const FAULT_BODIES: Record<number, unknown> = {
  400: { non_field_errors: ['Bad request.'] },
  401: { detail: 'Invalid API key' },
  403: { detail: 'You do not have permission to perform this action.' },
  404: { error: NOT_FOUND_MESSAGE },
  408: { detail: 'Request timeout.' },
  409: { detail: 'Conflict.' },
  429: { detail: 'Request was throttled.' },
  500: { detail: 'Internal server error.' },
  502: { detail: 'Bad gateway.' },
  503: { detail: 'Service unavailable.' },
  504: { detail: 'Gateway timeout.' },
};

/**
 * Default body of a status fault: the service's own shape for that status where the reference
 * gives one, so an injected failure looks like a real one to the SDK's error mapping.
 */
export function defaultFaultBody(status: number): string {
  return JSON.stringify(FAULT_BODIES[status] ?? { detail: `Mock fault ${status}.` });
}
