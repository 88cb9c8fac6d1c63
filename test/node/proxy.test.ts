import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { buildChild } from '../redis/processes.js';
import { type ForwardProxy, startForwardProxy } from './fixtures/proxy-server.js';

// The default engine reads HTTP(S)_PROXY / NO_PROXY once per process, so each case runs the real
// client in a child process (test/node/fixtures/proxy-child.ts, bundled with the sources) with its
// own environment, against the mock over real HTTP and, for https, through a TLS front whose
// self-signed certificate (fixtures/localhost-*.pem, localhost and 127.0.0.1, 100 years) the child
// trusts through NODE_EXTRA_CA_CERTS. A local forward proxy counts CONNECTs and absolute-form
// requests and records every byte clients send it.

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const CERT = fixture('localhost-cert.pem');

/** Every variable undici's EnvHttpProxyAgent (or Node's own fetch, from 22.21/24) reads: none is inherited. */
const PROXY_VARS = [
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'https_proxy',
  'http_proxy',
  'no_proxy',
  'NODE_USE_ENV_PROXY',
];

let child: { file: string; remove(): void };
let proxy: ForwardProxy;
let mock: MockServer;
let front: TlsServer;
const frontSockets = new Set<Socket>();
/** The mock's API over http on 127.0.0.1 and over https on localhost (the TLS front). */
let httpUrl: string;
let httpsUrl: string;
let httpHost: string;
let httpsHost: string;

beforeAll(async () => {
  child = await buildChild('../node/fixtures/proxy-child.ts');
  proxy = await startForwardProxy();
  mock = await startMockServer();
  httpUrl = mock.baseUrl;
  httpHost = new URL(httpUrl).host;
  // TLS in front of the mock: decrypts and passes the bytes on.
  front = createTlsServer(
    { key: readFileSync(fixture('localhost-key.pem')), cert: readFileSync(CERT) },
    (tls) => {
      const plain = connect(Number(new URL(httpUrl).port), '127.0.0.1');
      for (const socket of [tls, plain]) {
        frontSockets.add(socket);
        socket.on('close', () => frontSockets.delete(socket));
        socket.on('error', () => {
          tls.destroy();
          plain.destroy();
        });
      }
      tls.pipe(plain).pipe(tls);
    },
  );
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  httpsHost = `localhost:${(front.address() as AddressInfo).port}`;
  httpsUrl = `https://${httpsHost}/api/`;
});

afterAll(async () => {
  for (const socket of frontSockets) socket.destroy();
  await Promise.all([new Promise((resolve) => front?.close(resolve)), proxy?.close(), mock?.close()]);
  child?.remove();
});

beforeEach(() => {
  proxy.reset();
  mock.reset();
});

type Result = { ok: true } | { ok: false; errors: string[] };

/**
 * Runs the child with no proxy variable inherited and `env` added; resolves with the result of
 * each call it made.
 */
function run(env: Record<string, string>): Promise<Result[]> {
  const base: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: CERT, API_KEY: mock.apiKey };
  for (const name of PROXY_VARS) delete base[name];
  const spawned = spawn(process.execPath, [child.file], {
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  spawned.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  spawned.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => spawned.kill('SIGKILL'), 15_000);
    spawned.once('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith('{"type":"done"'));
      if (line) resolve((JSON.parse(line) as { results: Result[] }).results);
      else reject(new Error(`child ended (${code ?? signal}) without results:\n${stdout}\n${stderr}`));
    });
  });
}

const allOk = (results: Result[], calls = 1) => {
  expect(results).toEqual(Array.from({ length: calls }, () => ({ ok: true })));
};

/** What the proxy was sent, as text (tunnelled TLS bytes come out as noise, which is the point). */
const seen = () => proxy.received().toString('latin1');

/** The proxy was not used at all: no CONNECT, no request, not a byte. */
const proxyUnused = () => {
  expect({ connects: proxy.connects, forwarded: proxy.forwarded, bytes: proxy.received().length }).toEqual({
    connects: [],
    forwarded: [],
    bytes: 0,
  });
};

describe('the default engine in Node, under HTTP(S)_PROXY / NO_PROXY', () => {
  it('takes an https target (even on loopback) through HTTPS_PROXY in a CONNECT tunnel: the proxy never sees the API key', async () => {
    allOk(await run({ BASE_URL: httpsUrl, HTTPS_PROXY: proxy.url }));
    expect(proxy.connects).toContain(httpsHost);
    expect(proxy.connects.every((target) => target === httpsHost)).toBe(true);
    expect(proxy.forwarded).toEqual([]);
    // The request did reach the API, through the tunnel.
    expect(mock.requests.count()).toBe(1);
    expect(mock.requests.last()?.headers.host).toBe(httpsHost);
    // The proxy saw the CONNECT and then only ciphertext: neither the key nor the request line.
    expect(seen()).toContain(`CONNECT ${httpsHost} HTTP/1.1`);
    expect(seen()).not.toContain(mock.apiKey);
    expect(seen()).not.toContain('/api/');
  });

  it('takes an http target through HTTP_PROXY as an absolute-form request', async () => {
    allOk(await run({ BASE_URL: httpUrl, HTTP_PROXY: proxy.url }));
    expect(proxy.connects).toEqual([]);
    expect(proxy.forwarded).toHaveLength(1);
    expect(proxy.forwarded[0]).toMatch(new RegExp(`^http://${httpHost}/api/`));
    expect(mock.requests.count()).toBe(1);
    // In clear, as http is: the recording does see what a client sends (so the check above can fail).
    expect(seen()).toContain(mock.apiKey);
  });

  it('takes an https target through HTTP_PROXY when HTTPS_PROXY is not set, still in a CONNECT tunnel', async () => {
    allOk(await run({ BASE_URL: httpsUrl, HTTP_PROXY: proxy.url }));
    expect(proxy.connects).toContain(httpsHost);
    expect(proxy.forwarded).toEqual([]);
    expect(seen()).not.toContain(mock.apiKey);
  });

  it('reads the lowercase names too, and prefers them to the uppercase ones', async () => {
    // The uppercase proxy is a port nothing listens on: used, the call would fail.
    const dead = 'http://127.0.0.1:1';
    allOk(await run({ BASE_URL: httpsUrl, https_proxy: proxy.url, HTTPS_PROXY: dead }));
    expect(proxy.connects).toEqual([httpsHost]);
    proxy.reset();
    allOk(await run({ BASE_URL: httpUrl, http_proxy: proxy.url, HTTP_PROXY: dead }));
    expect(proxy.forwarded).toHaveLength(1);
  });

  it('goes direct to a host NO_PROXY names, and keeps doing so when NO_PROXY is removed later', async () => {
    const env = { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url, NO_PROXY: 'example.com,localhost' };
    // CALLS=2: NO_PROXY is deleted before the second call; the environment was read on the first.
    allOk(await run({ ...env, BASE_URL: httpsUrl, CALLS: '2', LATER_ENV: '{"NO_PROXY":null}' }), 2);
    proxyUnused();
    expect(mock.requests.count()).toBe(2);

    // An entry with a port covers that port only, and no_proxy (lowercase) counts as NO_PROXY.
    const port = new URL(httpUrl).port;
    allOk(await run({ HTTP_PROXY: proxy.url, no_proxy: `127.0.0.1:${port}`, BASE_URL: httpUrl }));
    proxyUnused();
    allOk(await run({ HTTP_PROXY: proxy.url, no_proxy: '127.0.0.1:1', BASE_URL: httpUrl }));
    expect(proxy.forwarded).toHaveLength(1);
  });

  it('with no proxy variable set, goes direct, and a proxy set later in the process is not used', async () => {
    const later = JSON.stringify({ HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url });
    allOk(await run({ BASE_URL: httpsUrl, CALLS: '2', LATER_ENV: later }), 2);
    allOk(await run({ BASE_URL: httpUrl, CALLS: '2', LATER_ENV: later }), 2);
    proxyUnused();
    expect(mock.requests.count()).toBe(4);
  });

  it('leaves a dispatcher or fetch the user passed as it is: the environment does not reroute it', async () => {
    const env = { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url };
    for (const ENGINE of ['dispatcher', 'fetch']) {
      allOk(await run({ ...env, ENGINE, BASE_URL: httpsUrl }));
      allOk(await run({ ...env, ENGINE, BASE_URL: httpUrl }));
    }
    proxyUnused();
    expect(mock.requests.count()).toBe(4);
  });

  it('fails each call with a connection error naming the variable, not its value, when the proxy URL is not one', async () => {
    const results = await run({
      BASE_URL: httpsUrl,
      HTTPS_PROXY: 'http://user:s3cret@',
      CALLS: '2',
    });
    expect(results).toHaveLength(2);
    for (const result of results) {
      expect(result.ok).toBe(false);
      const errors = result.ok ? [] : result.errors;
      expect(errors[0]).toMatch(/^APIConnectionError/);
      expect(errors.join('\n')).toContain('HTTP(S)_PROXY is not a proxy URL');
      expect(errors.join('\n')).not.toContain('s3cret');
    }
    proxyUnused();
    expect(mock.requests.count()).toBe(0);
  });
});
