// The floor: Node's global fetch (undici) and JSON.parse of the text, nothing else.

export const label = 'raw fetch + JSON.parse';
export const pkg = null;

/** @param {import('../shared.mjs').Target} t */
export async function create(t) {
  const url = t.origin + t.path + t.search;
  const init = { headers: { authorization: `Bearer ${t.apiKey}`, accept: 'application/json' } };
  return async () => {
    const res = await fetch(url, init);
    const text = await res.text();
    // A status check every client does too, so an error can never be counted as a fast success.
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text}`);
    return JSON.parse(text).results;
  };
}
