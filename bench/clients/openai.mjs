// openai-node 6.x (the last line that runs on Node 20), its generic `client.get` pointed at the server.
// baseURL `…/api` + path `/invoices/` gives `/api/invoices/`, and `query` is serialised in key order,
// so the request line is the same bytes as every other client's.
import OpenAI from 'openai';

export const label = 'openai-node client.get';
export const pkg = 'openai';

/** @param {import('../shared.mjs').Target} t */
export async function create(t) {
  const client = new OpenAI({ apiKey: t.apiKey, baseURL: `${t.origin}/api`, maxRetries: 0 });
  const query = { account_ref_id: t.query.account_ref_id, page_size: t.query.page_size };
  return async () => {
    const body = /** @type {{results: unknown[]}} */ (await client.get('/invoices/', { query }));
    return body.results;
  };
}
