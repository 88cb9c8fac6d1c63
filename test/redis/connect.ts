import { createClient } from 'redis';
import { afterAll, beforeAll } from 'vitest';

/** A node-redis client, as an application makes one. */
export type NodeRedis = ReturnType<typeof createClient>;

/**
 * A connected node-redis client. Its 'error' events are swallowed: node-redis emits one per lost
 * connection, and an unhandled 'error' event would end the test process.
 */
export async function connectRedis(url: string, options: Parameters<typeof createClient>[0] = {}) {
  const client = createClient({ url, ...options });
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** A key prefix no other test shares, so tests need not flush the server between them. */
export const uniquePrefix = (name: string): string => `test:${name}:${Math.random().toString(36).slice(2)}:`;

/**
 * One connected client for a test file, to the server of `useRedisServer()` (read once it runs):
 * connected in `beforeAll`, closed in `afterAll`.
 */
export function useRedisClient(redis: { readonly server: { url: string } }): { readonly client: NodeRedis } {
  const held: { client: NodeRedis } = {} as { client: NodeRedis };
  beforeAll(async () => {
    held.client = await connectRedis(redis.server.url);
  });
  afterAll(() => held.client?.close());
  return held;
}
