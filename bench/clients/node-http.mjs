// The transport limit: node:http with a keep-alive Agent, the body collected as Buffers and parsed once.
import { Agent, get } from 'node:http';

export const label = 'node:http keep-alive + JSON.parse';
export const pkg = null;

/** @param {import('../shared.mjs').Target} t */
export async function create(t) {
  // maxSockets stays unlimited, like undici's pool for fetch: at concurrency 32 both open 32 sockets.
  const agent = new Agent({ keepAlive: true });
  const options = {
    host: '127.0.0.1',
    port: t.port,
    path: t.path + t.search,
    agent,
    headers: { authorization: `Bearer ${t.apiKey}`, accept: 'application/json' },
  };
  return () =>
    new Promise((resolve, reject) => {
      const req = get(options, (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${text}`));
          try {
            resolve(JSON.parse(text).results);
          } catch (err) {
            reject(err);
          }
        });
      });
      req.on('error', reject);
    });
}
