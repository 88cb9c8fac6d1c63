// ky 1.x, as an app would call it: `.json()` on the response promise. Retries off (its default is 2 for GET).
import ky from 'ky';

export const label = 'ky .json()';
export const pkg = 'ky';

/** @param {import('../shared.mjs').Target} t */
export async function create(t) {
  const url = t.origin + t.path + t.search;
  const options = { headers: { authorization: `Bearer ${t.apiKey}`, accept: 'application/json' }, retry: 0 };
  return async () => {
    // ky throws HTTPError on a non-2xx status by default.
    const body = /** @type {{results: unknown[]}} */ (await ky.get(url, options).json());
    return body.results;
  };
}
