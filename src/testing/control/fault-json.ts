import { MESSAGES } from '../errors.js';
import type { Fault } from '../faults.js';
import { bodyField, bodyObject, bodyString, type FieldErrors, type FieldRule } from '../validation.js';
import { bodyChoice, rejectUnknownFields } from './fields.js';

/**
 * A {@link Fault} as JSON, for the control routes: the same fields, except that JSON has no
 * RegExp, Infinity or bytes, so `pathRegex` is a RegExp's source, `times` may be `"Infinity"`
 * and `bodyBase64` carries `bodyBytes`.
 */
export interface FaultJson {
  /** {@link Fault.method}. */
  method?: string | undefined;
  /** {@link Fault.path} as a prefix; starts with `/`. */
  path?: string | undefined;
  /** {@link Fault.path} as a regular expression (its source, no flags); exclusive with `path`. */
  pathRegex?: string | undefined;
  /** {@link Fault.times}: an integer >= 1, or `"Infinity"`. */
  times?: number | 'Infinity' | undefined;
  /** {@link Fault.probability}. */
  probability?: number | undefined;
  /** {@link Fault.status}. */
  status?: number | undefined;
  /** {@link Fault.headers}. */
  headers?: Record<string, string> | undefined;
  /** {@link Fault.body}. */
  body?: string | undefined;
  /** {@link Fault.bodyBytes}, base64-encoded. */
  bodyBase64?: string | undefined;
  /** {@link Fault.encoding}. */
  encoding?: 'gzip' | undefined;
  /** {@link Fault.stall}. */
  stall?: 'body' | undefined;
  /** {@link Fault.delayMs}. */
  delayMs?: number | undefined;
  /** {@link Fault.reset}. */
  reset?: 'before' | 'after' | undefined;
}

const FIELDS = [
  'method',
  'path',
  'pathRegex',
  'times',
  'probability',
  'status',
  'headers',
  'body',
  'bodyBase64',
  'encoding',
  'stall',
  'delayMs',
  'reset',
] as const satisfies readonly (keyof FaultJson)[];

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isString = (value: unknown): value is string => typeof value === 'string';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const METHOD: FieldRule<string> = {
  is: isString,
  type: MESSAGES.string,
  checks: [[(value) => /^[A-Za-z]+$/.test(value), 'Enter an HTTP method, e.g. "GET".']],
};
const PATH: FieldRule<string> = {
  is: isString,
  type: MESSAGES.string,
  checks: [[(value) => value.startsWith('/'), 'Must start with "/" (a prefix of the request path).']],
};
const TIMES: FieldRule<number | 'Infinity'> = {
  is: (value): value is number | 'Infinity' =>
    value === 'Infinity' || (typeof value === 'number' && Number.isSafeInteger(value)),
  type: 'A valid integer (or "Infinity") is required.',
  checks: [[(value) => value === 'Infinity' || value >= 1, MESSAGES.minOne]],
};
const PROBABILITY: FieldRule<number> = {
  is: isNumber,
  type: MESSAGES.number,
  checks: [[(value) => value >= 0 && value <= 1, 'Ensure this value is from 0 to 1.']],
};
const STATUS: FieldRule<number> = {
  is: (value): value is number => typeof value === 'number' && Number.isInteger(value),
  type: MESSAGES.integer,
  checks: [[(value) => value >= 200 && value <= 599, 'Ensure this value is from 200 to 599.']],
};
const DELAY: FieldRule<number> = {
  is: isNumber,
  type: MESSAGES.number,
  checks: [[(value) => value >= 0, 'Ensure this value is greater than or equal to 0.']],
};
const STRING: FieldRule<string> = { is: isString, type: MESSAGES.string };
const BASE64_STRING: FieldRule<string> = {
  ...STRING,
  checks: [[(value) => BASE64.test(value), 'Enter valid base64.']],
};

function compile(source: string, errors: FieldErrors): RegExp | undefined {
  try {
    return new RegExp(source);
  } catch (error) {
    errors.add('pathRegex', `Not a valid regular expression: ${(error as Error).message}`);
    return undefined;
  }
}

function headersField(
  body: Record<string, unknown>,
  errors: FieldErrors,
): Record<string, string> | undefined {
  const headers = bodyObject(body, 'headers', errors);
  if (headers === null) return undefined;
  const valid =
    Object.values(headers).every(isString) &&
    (() => {
      try {
        new Headers(headers as Record<string, string>);
        return true;
      } catch {
        return false;
      }
    })();
  if (!valid) errors.add('headers', 'Expected an object of header names to string values.');
  return valid ? (headers as Record<string, string>) : undefined;
}

/**
 * Reads a fault from a control body, collecting every field problem. Combinations the mock refuses
 * (e.g. `stall` with `reset`) are left to {@link MockFaults.add}, which reports them as RangeErrors.
 */
export function faultFromJson(body: Record<string, unknown>, errors: FieldErrors): Fault {
  rejectUnknownFields(body, FIELDS, errors);
  const path = bodyField(body, 'path', errors, false, PATH);
  const pathRegex = bodyField(body, 'pathRegex', errors, false, STRING);
  if (path !== undefined && pathRegex !== undefined)
    errors.add('pathRegex', 'Give path or pathRegex, not both.');
  const times = bodyField(body, 'times', errors, false, TIMES);
  const text = bodyString(body, 'body', errors, false);
  const base64 = bodyField(body, 'bodyBase64', errors, false, BASE64_STRING);
  if (text !== undefined && base64 !== undefined)
    errors.add('bodyBase64', 'Give body or bodyBase64, not both.');
  const fault: Fault = {
    method: bodyField(body, 'method', errors, false, METHOD),
    path: pathRegex === undefined ? path : compile(pathRegex, errors),
    times: times === 'Infinity' ? Number.POSITIVE_INFINITY : times,
    probability: bodyField(body, 'probability', errors, false, PROBABILITY),
    status: bodyField(body, 'status', errors, false, STATUS),
    headers: headersField(body, errors),
    body: text,
    bodyBytes: base64 === undefined ? undefined : new Uint8Array(Buffer.from(base64, 'base64')),
    encoding: bodyChoice(body, 'encoding', ['gzip'], errors),
    stall: bodyChoice(body, 'stall', ['body'], errors),
    delayMs: bodyField(body, 'delayMs', errors, false, DELAY),
    reset: bodyChoice(body, 'reset', ['before', 'after'], errors),
  };
  // Absent fields stay absent, so listing the fault shows only what was given.
  for (const key of Object.keys(fault) as (keyof Fault)[]) {
    if (fault[key] === undefined) delete fault[key];
  }
  return fault;
}

/** The JSON form of a queued fault (see {@link FaultJson}), in field order; absent fields are left out. */
export function faultToJson(fault: Fault): FaultJson {
  const { path, times, bodyBytes } = fault;
  const converted: FaultJson = {
    ...fault,
    path: typeof path === 'string' ? path : undefined,
    pathRegex: path instanceof RegExp ? path.source : undefined,
    times: times === Number.POSITIVE_INFINITY ? 'Infinity' : times,
    bodyBase64: bodyBytes === undefined ? undefined : Buffer.from(bodyBytes).toString('base64'),
  };
  const entries = FIELDS.map((name) => [name, converted[name]] as const).filter(([, v]) => v !== undefined);
  return Object.fromEntries(entries) as FaultJson;
}
