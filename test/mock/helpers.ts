import type { MockServer } from '../../src/testing/index.js';

/** A parsed answer: status, headers, raw text and JSON (undefined when the body is not JSON). */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

type Target = Pick<MockServer, 'baseUrl' | 'apiKey'>;

/** Reads a response into an {@link Answer}. */
export async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

/**
 * Plain-fetch client for the mock: API-relative paths, the Bearer key unless headers say otherwise.
 * Takes a server, or the `{ server }` of `useMockServer()`, read on each call because that server
 * only exists once `beforeAll` has run.
 */
export function client(target: Target | { readonly server: Target }) {
  const call = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const server = 'server' in target ? target.server : target;
    const response = await fetch(new URL(path, server.baseUrl), {
      method,
      headers: {
        authorization: `Bearer ${server.apiKey}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    return answerOf(response);
  };
  return {
    get: (path: string, headers?: Record<string, string>) => call('GET', path, undefined, headers),
    post: (path: string, body: unknown, headers?: Record<string, string>) =>
      call('POST', path, body, headers),
    call,
  };
}

/** Narrows an answer body to a record for property access in assertions. */
export function obj(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`expected a JSON object, got ${JSON.stringify(value)}`);
  }
  return value as Record<string, unknown>;
}

/** The `results` array of a list envelope, as records. */
export function results(value: unknown): Record<string, unknown>[] {
  const list = obj(value).results;
  if (!Array.isArray(list)) throw new Error('expected results to be an array');
  return list.map(obj);
}
