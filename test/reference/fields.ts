/**
 * Reads the documented response keys out of the API reference (test/reference/api-reference.md),
 * so that a test can hold every mock answer to exactly what the reference lists. Deliberately
 * small: it understands the reference's own table and prose patterns and throws on anything it
 * cannot place, so a reworded reference fails loudly instead of checking nothing.
 */

/** What a documented field holds, as far as key checking needs to know. */
export type FieldType =
  | { kind: 'scalar' }
  /** A section 2 object by its heading, e.g. `Subscription tier`. */
  | { kind: 'ref'; name: string }
  | { kind: 'object'; shape: Shape }
  | { kind: 'array'; of: FieldType };

/** One documented key. */
export interface Field {
  type: FieldType;
  /** The reference says the key is present only in some variant. */
  optional: boolean;
}

/** A documented body. */
export type Shape =
  /** A JSON object with exactly these keys (optional ones may be absent). */
  | { kind: 'object'; fields: Record<string, Field> }
  /** Section 7's 400 body: any field name, each mapped to a list of messages. */
  | { kind: 'fieldErrors' }
  /** A zero-byte body (fix-subscription's "nothing to fix"). */
  | { kind: 'empty' }
  /** A section 2 object as the whole body, e.g. `Response: Entitlement check result.` */
  | { kind: 'ref'; name: string };

/** One endpoint section of section 4. */
export interface Endpoint {
  /** The heading, e.g. `GET /transactions/<account_ref_id>/`. */
  heading: string;
  /** Documented bodies by variant name (`default`, `Shape A`, a case of a Responses table, `error`, `empty`). */
  variants: Record<string, Shape>;
  /** The `Response:` sentence when the parser could not turn it into shapes; the test hand-writes those. */
  unparsed?: string;
}

/** Everything the reference documents about response keys. */
export interface Reference {
  /** Section 2 objects by heading, plus `Webhook payload` from section 6. */
  objects: Record<string, Shape>;
  /** Section 4's pagination envelope, `results` typed as an array of nothing in particular. */
  envelope: Record<string, Field>;
  endpoints: Record<string, Endpoint>;
  /** Section 7's error bodies by status (429 documents a header, no body). */
  errors: Record<number, Shape>;
}

const SCALAR: FieldType = { kind: 'scalar' };
const KEY = /^[a-z][a-z0-9_]*$/;

interface Block {
  level: number;
  heading: string;
  lines: string[];
}

/** Splits the document at `##` and `###` headings; `level` 2 blocks hold only the text before their first `###`. */
function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  let current: Block = { level: 1, heading: '', lines: [] };
  for (const line of markdown.split('\n')) {
    const heading = /^(#{2,3}) (.*)$/.exec(line);
    if (heading) {
      out.push(current);
      current = { level: heading[1]?.length ?? 0, heading: heading[2] ?? '', lines: [] };
    } else current.lines.push(line);
  }
  out.push(current);
  return out;
}

/** The rows of the first table of `lines` whose header starts with `firstHeader`, as cell lists. */
function table(lines: string[], firstHeader: string): string[][] | undefined {
  const start = lines.findIndex((l) => l.startsWith(`| ${firstHeader} |`));
  if (start < 0) return undefined;
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** Splits at commas outside braces and parentheses. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let part = '';
  for (const ch of text) {
    if (ch === '{' || ch === '(') depth++;
    if (ch === '}' || ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(part.trim());
      part = '';
    } else part += ch;
  }
  if (part.trim() !== '') parts.push(part.trim());
  return parts;
}

function key(text: string, context: string): string {
  if (!KEY.test(text)) throw new Error(`reference: cannot read a field name from "${text}" (${context})`);
  return text;
}

class Parser {
  readonly objectNames: Set<string>;

  constructor(objectNames: Iterable<string>) {
    this.objectNames = new Set(objectNames);
  }

  /** A type cell or parenthetical: `Subscription tier object`, `array of Product`, `array of { … }`, or a scalar. */
  type(text: string): FieldType {
    const t = text.trim();
    const inline = /^array of \{(.*)\}$/.exec(t);
    if (inline) return { kind: 'array', of: { kind: 'object', shape: this.inlineObject(inline[1] ?? '') } };
    const arrayOf = /^array of (.+)$/.exec(t);
    if (arrayOf) return { kind: 'array', of: this.type(arrayOf[1] ?? '') };
    const named = /^(.+?) (objects?)$/.exec(t);
    if (named && this.objectNames.has(named[1] ?? '')) {
      const ref: FieldType = { kind: 'ref', name: named[1] ?? '' };
      return named[2] === 'objects' ? { kind: 'array', of: ref } : ref;
    }
    if (this.objectNames.has(t)) return { kind: 'ref', name: t };
    return SCALAR;
  }

  /** `{ is_active: boolean, created_at, updated_at (ISO 8601 UTC), subscription_tier: Subscription tier object }`. */
  inlineObject(text: string): Shape {
    const fields: Record<string, Field> = {};
    for (const part of topLevelParts(text)) {
      const [, name = '', type] = /^([^\s:(]+)\s*(?::\s*(.*))?/.exec(part) ?? [];
      fields[key(name, part)] = { type: type === undefined ? SCALAR : this.type(type), optional: false };
    }
    return { kind: 'object', fields };
  }

  /** A `Field | Type | Notes` table; a note saying "present only" makes the key optional. */
  fieldTable(rows: string[][]): Shape {
    const fields: Record<string, Field> = {};
    for (const [name = '', type = '', notes = ''] of rows) {
      fields[key(name, 'field table')] = { type: this.type(type), optional: /present only/i.test(notes) };
    }
    return { kind: 'object', fields };
  }

  /** "account_ref_id, product_code, entitlement_code (strings, echoed) and has_access (boolean)." */
  proseObject(text: string): Shape {
    const names = text
      .replace(/\([^)]*\)/g, '')
      .replace(/\.$/, '')
      .split(/,| and /)
      .map((s) => s.trim())
      .filter(Boolean);
    const fields: Record<string, Field> = {};
    for (const name of names) fields[key(name, text)] = { type: SCALAR, optional: false };
    return { kind: 'object', fields };
  }

  /** "`count` (integer), `results` (array of Product)": backticked keys, each with an optional type. */
  backtickedFields(text: string): Record<string, Field> {
    const fields: Record<string, Field> = {};
    for (const m of text.matchAll(/`([^`]+)`(?:\s*\(([^)]*)\))?/g)) {
      const type = topLevelParts(m[2] ?? '')[0];
      fields[key(m[1] ?? '', text)] = { type: type ? this.type(type) : SCALAR, optional: false };
    }
    return fields;
  }

  /** A cell of a `Case | Body` table: "approved false, error_code insufficient_credits, remaining_balance (the current balance)". */
  caseBody(text: string): Shape {
    const fields: Record<string, Field> = {};
    for (const part of topLevelParts(text)) {
      const name =
        part
          .replace(/\(.*\)/, '')
          .trim()
          .split(/\s+/)[0] ?? '';
      fields[key(name, text)] = { type: SCALAR, optional: false };
    }
    return { kind: 'object', fields };
  }

  /** A body shape cell of section 7, e.g. `` `{ "detail": "Invalid API key" }` ``. */
  errorBody(text: string): Shape | undefined {
    if (!text.startsWith('`{')) return undefined;
    if (text.includes('"<field_name>"')) return { kind: 'fieldErrors' };
    const fields: Record<string, Field> = {};
    for (const m of text.matchAll(/"([^"]+)"\s*:/g))
      fields[key(m[1] ?? '', text)] = { type: SCALAR, optional: false };
    return { kind: 'object', fields };
  }
}

function firstSentence(text: string): string {
  // Sentences end at ". " outside backticks; the reference puts no ". " inside them.
  return text.split(/\.\s/)[0]?.replace(/\.$/, '') ?? text;
}

function endpoint(parser: Parser, block: Block, envelope: Record<string, Field>): Endpoint {
  const variants: Record<string, Shape> = {};
  const result: Endpoint = { heading: block.heading, variants };
  const text = block.lines.join('\n');
  const response = /Response: (.*)/.exec(text)?.[1];
  if (response !== undefined) {
    const sentence = firstSentence(response);
    const envelopeOf = /^pagination envelope with (.+)$/.exec(sentence);
    if (envelopeOf) {
      variants.default = {
        kind: 'object',
        fields: { ...envelope, results: { type: parser.type(envelopeOf[1] ?? ''), optional: false } },
      };
    } else if (sentence.startsWith('`')) {
      variants.default = { kind: 'object', fields: parser.backtickedFields(sentence) };
    } else if (parser.objectNames.has(sentence)) {
      variants.default = { kind: 'ref', name: sentence };
    } else result.unparsed = sentence;
    if (/the response body is empty/.test(response)) variants.empty = { kind: 'empty' };
  }
  for (const m of text.matchAll(/^- (Shape \w+): (.*)$/gm)) {
    variants[m[1] ?? ''] = { kind: 'object', fields: parser.backtickedFields(m[2] ?? '') };
  }
  const errorKey = /^Error bodies \(`([^`]+)` string\)/m.exec(text)?.[1];
  if (errorKey !== undefined) {
    variants.error = {
      kind: 'object',
      fields: { [key(errorKey, 'error bodies')]: { type: SCALAR, optional: false } },
    };
  }
  for (const [name = '', body = ''] of table(block.lines, 'Case') ?? [])
    variants[name] = parser.caseBody(body);
  if (Object.keys(variants).length === 0 && result.unparsed === undefined) {
    throw new Error(`reference: no response documented for ${block.heading}`);
  }
  return result;
}

/** Parses the reference into documented key sets. Throws when a section it relies on is missing. */
export function parseReference(markdown: string): Reference {
  const all = blocks(markdown);
  const section = (prefix: string) => {
    const start = all.findIndex((b) => b.level === 2 && b.heading.startsWith(prefix));
    if (start < 0) throw new Error(`reference: no section "${prefix}"`);
    const end = all.findIndex((b, i) => i > start && b.level === 2);
    return { intro: all[start] as Block, subs: all.slice(start + 1, end < 0 ? undefined : end) };
  };

  const resources = section('2.');
  const parser = new Parser(resources.subs.map((b) => b.heading));
  const objects: Record<string, Shape> = {};
  for (const block of resources.subs) {
    const rows = table(block.lines, 'Field');
    if (rows) {
      objects[block.heading] = parser.fieldTable(rows);
      continue;
    }
    const prose = block.lines.map((l) => l.trim()).filter(Boolean);
    // "See Events.": the webhook payload's table lives in section 6.
    if (prose[0] === 'See Events.') continue;
    if (prose.length !== 1) throw new Error(`reference: cannot read the fields of ${block.heading}`);
    objects[block.heading] = parser.proseObject(prose[0] ?? '');
  }
  const payload = table(section('6.').intro.lines, 'Field');
  if (!payload) throw new Error('reference: no webhook payload table in section 6');
  objects['Webhook payload'] = parser.fieldTable(payload);

  const endpointSection = section('4.');
  const pagination = endpointSection.subs.find((b) => b.heading.startsWith('Pagination'));
  const envelopeLine = pagination?.lines.find((l) => l.startsWith('Envelope: '));
  if (!envelopeLine) throw new Error('reference: no pagination envelope');
  const envelope = parser.backtickedFields(firstSentence(envelopeLine.slice('Envelope: '.length)));

  const endpoints: Record<string, Endpoint> = {};
  for (const block of endpointSection.subs) {
    if (!/^(GET|POST) \//.test(block.heading)) continue;
    endpoints[block.heading] = endpoint(parser, block, envelope);
  }

  const errors: Record<number, Shape> = {};
  for (const [status = '', body = ''] of table(section('7.').intro.lines, 'Status') ?? []) {
    const shape = parser.errorBody(body);
    if (shape) errors[Number.parseInt(status, 10)] = shape;
  }

  const reference: Reference = { objects, envelope, endpoints, errors };
  assertRefsResolve(reference);
  return reference;
}

function assertRefsResolve(reference: Reference): void {
  const visit = (type: FieldType): void => {
    if (type.kind === 'ref' && !reference.objects[type.name]) {
      throw new Error(`reference: unknown object "${type.name}"`);
    }
    if (type.kind === 'array') visit(type.of);
    if (type.kind === 'object') visitShape(type.shape);
  };
  const visitShape = (shape: Shape): void => {
    if (shape.kind === 'ref') visit(shape);
    if (shape.kind === 'object') for (const field of Object.values(shape.fields)) visit(field.type);
  };
  for (const shape of Object.values(reference.objects)) visitShape(shape);
  for (const e of Object.values(reference.endpoints))
    for (const s of Object.values(e.variants)) visitShape(s);
}

/** The section 2 object `name` as a shape. */
export function objectShape(reference: Reference, name: string): Shape {
  const shape = reference.objects[name];
  if (!shape) throw new Error(`reference: no object "${name}"`);
  return shape;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Every way `value` differs from `shape` in its keys, recursively into nested objects and array
 * items: `$.results[0]: undocumented key "product_code"`, `$: missing key "count"`. Empty when it
 * matches. Values are not checked beyond being objects and arrays where the reference says so.
 */
export function keyProblems(reference: Reference, value: unknown, shape: Shape, path = '$'): string[] {
  if (shape.kind === 'empty') return [`${path}: expected an empty body`];
  if (shape.kind === 'ref') return keyProblems(reference, value, objectShape(reference, shape.name), path);
  if (!isRecord(value)) return [`${path}: expected a JSON object, got ${JSON.stringify(value)}`];
  if (shape.kind === 'fieldErrors') {
    return Object.entries(value)
      .filter(([, messages]) => !Array.isArray(messages) || !messages.every((m) => typeof m === 'string'))
      .map(([name]) => `${path}.${name}: expected a list of messages`);
  }
  const problems: string[] = [];
  for (const name of Object.keys(value)) {
    if (!(name in shape.fields)) problems.push(`${path}: undocumented key "${name}"`);
  }
  for (const [name, field] of Object.entries(shape.fields)) {
    if (!(name in value)) {
      if (!field.optional) problems.push(`${path}: missing key "${name}"`);
      continue;
    }
    problems.push(...typeProblems(reference, value[name], field.type, `${path}.${name}`));
  }
  return problems;
}

function typeProblems(reference: Reference, value: unknown, type: FieldType, path: string): string[] {
  switch (type.kind) {
    case 'scalar':
      return [];
    case 'ref':
      return keyProblems(reference, value, objectShape(reference, type.name), path);
    case 'object':
      return keyProblems(reference, value, type.shape, path);
    case 'array':
      if (!Array.isArray(value)) return [`${path}: expected an array`];
      return value.flatMap((item, i) => typeProblems(reference, item, type.of, `${path}[${i}]`));
  }
}

/** The documented keys of a shape (optional ones marked `?`), for readable test expectations. */
export function describeKeys(reference: Reference, shape: Shape): string[] {
  if (shape.kind === 'ref') return describeKeys(reference, objectShape(reference, shape.name));
  if (shape.kind !== 'object') return [shape.kind];
  return Object.entries(shape.fields)
    .map(([name, field]) => (field.optional ? `${name}?` : name))
    .sort();
}
