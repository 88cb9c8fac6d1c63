import type { Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BillingClient, ResponseTooLargeError } from '../../src/index.js';
import { caught, instantClock, type LoopbackServer, serveNode, until, withClock } from '../helpers.js';

// 64 MiB of JSON whitespace compresses to about 64 KB: a gzip bomb.
const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, ' '));
const big = Buffer.alloc(50 * 1024 * 1024, 'x');
let server: LoopbackServer;
const sockets = new Set<Socket>();
let sent = 0;

beforeAll(async () => {
  server = await serveNode((req, res) => {
    sockets.add(req.socket);
    req.socket.once('close', () => sockets.delete(req.socket));
    if (req.url?.includes('bomb')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(bomb);
    } else if (req.url?.includes('declared')) {
      res.writeHead(500, { 'content-type': 'text/plain', 'content-length': String(big.length) });
      res.end(big);
    } else {
      // Chunked, no content-length: the limit must hold while reading.
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_big' });
      sent = 0;
      const write = () => {
        while (sent < big.length) {
          const chunk = big.subarray(sent, sent + 65_536);
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', write);
        }
        res.end();
      };
      write();
    }
  });
});
afterAll(() => server.close());

const client = (maxResponseBytes?: number) =>
  new BillingClient(
    withClock(
      { apiKey: 'k', baseUrl: `${server.url}/api/`, maxRetries: 0, logLevel: 'off', maxResponseBytes },
      instantClock(),
    ),
  );

describe('maxResponseBytes', () => {
  it('stops reading a 50 MB body at the default limit (4 MiB) and drops the connection', async () => {
    const err = (await caught(() =>
      client().tiers.list({ subscription_name: 'stream' }),
    )) as ResponseTooLargeError;
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err.limit).toBe(4 * 1024 * 1024);
    expect(err.status).toBe(200);
    expect(err.requestId).toBe('req_big');
    expect(err.message).toContain(
      'tiers.list (GET /api/tiers/stream/) answered 200 with a body over maxResponseBytes',
    );
    await until(() => sockets.size === 0, 2_000);
    expect(sent).toBeLessThan(big.length);
  });

  it('counts the decompressed bytes: a 64 KB gzip bomb fails as it inflates', async () => {
    expect(bomb.length).toBeLessThan(100_000);
    const err = (await caught(() =>
      client(1_000_000).tiers.list({ subscription_name: 'bomb' }),
    )) as ResponseTooLargeError;
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err.limit).toBe(1_000_000);
  });

  it('refuses a declared content-length over the limit before reading, error bodies included', async () => {
    const err = (await caught(() =>
      client(1024).tiers.list({ subscription_name: 'declared' }),
    )) as ResponseTooLargeError;
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err.status).toBe(500);
    expect(err).not.toHaveProperty('body');
    await until(() => sockets.size === 0, 2_000);
  });

  it('is checked like every option', async () => {
    for (const bad of [0, -1, Number.NaN, '5']) {
      const err = await caught(() => client(bad as number));
      expect(err.name).toBe('InvalidRequestError');
      expect(err.message).toContain('maxResponseBytes');
    }
  });
});
