import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import express from 'express';
import { type Context, Hono } from 'hono';
import {
  type AccessCache,
  type AccountStateHandler,
  type AccountStateView,
  BillingClient,
  createAccessCache,
  createGate,
  createNodeWebhookHandler,
} from '../../src/index.js';
import { type RedisClient, redisAccessStore } from '../../src/redis/index.js';
import type { MockServer } from '../../src/testing/index.js';
import { serveHono } from '../gate/helpers.js';
import { type LoopbackServer, serveNode } from '../helpers.js';
import { connectRedis } from '../redis/connect.js';

// Two instances of one app, as the browser drills run them: each its own client, access cache and
// Redis connection, sharing only redisAccessStore on one redis-server. Instance "hono" serves the
// page on Hono (@hono/node-server); instance "express" on Express, and receives the webhooks. The
// session is a cookie naming a token; the tokens map to accounts here, never in the browser.

/** The page's script: billing-sdk/view as an app bundles it (esbuild, browser platform). */
export async function pageScript(): Promise<string> {
  const out = await build({
    stdin: {
      contents: `
        import { createAccountView } from './src/view/index.ts';
        const view = createAccountView({ url: '/billing/state' });
        window.__view = view;
        window.__states = [];
        view.subscribe(() => window.__states.push(view.get()));
        view.ready.then((s) => { window.__ready = s; }, (e) => { window.__error = { name: e.name, status: e.status }; });
        const button = document.querySelector('#export');
        const upgrade = document.querySelector('#upgrade');
        view.subscribe(() => {
          const s = view.get();
          button.disabled = !view.can('export');
          upgrade.hidden = view.can('export');
          if (s.paywall_url) upgrade.href = s.paywall_url;
          document.querySelector('#credits').textContent = String(view.balance('ai-assistant', 'credits'));
        });`,
      resolveDir: fileURLToPath(new URL('../..', import.meta.url)),
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    minify: true,
    write: false,
  });
  return out.outputFiles[0]!.text;
}

const PAGE = `<!doctype html><button id="export" disabled>Export</button>
<a id="upgrade" hidden>Upgrade</a> credits: <span id="credits"></span><script type="module" src="/page.js"></script>`;

/** The session's account: the `session` cookie's token, looked up on the server. */
export function accountOf(
  cookie: string | undefined,
  sessions: ReadonlyMap<string, string>,
): string | undefined {
  const token = /(?:^|;\s*)session=([^;]+)/.exec(cookie ?? '')?.[1];
  return token ? sessions.get(token) : undefined;
}

/** One running instance. */
export interface Instance extends LoopbackServer {
  access: AccessCache;
  /** The state handler now (swapped by `dropStreams`). */
  readonly state: AccountStateHandler<never>;
  /** Ends every open stream, as a restart of the instance would, and serves new ones. */
  dropStreams(): Promise<void>;
  /** Everything this instance sent to browsers, bodies included (streams as they went). */
  readonly sent: string;
}

export interface InstanceOptions {
  kind: 'hono' | 'express';
  mock: MockServer;
  redisUrl: string;
  prefix: string;
  sessions: ReadonlyMap<string, string>;
  script: string;
  view: AccountStateView;
}

/** Starts one instance of the app. */
export async function startInstance(o: InstanceOptions): Promise<Instance> {
  const redis = await connectRedis(o.redisUrl);
  const billing = new BillingClient({ apiKey: o.mock.apiKey, baseUrl: o.mock.baseUrl, maxRetries: 0 });
  const access = createAccessCache(billing, {
    store: redisAccessStore(redis as unknown as RedisClient, { prefix: o.prefix }),
  });
  const cookieOf = (request: { headers: unknown }): string | undefined => {
    const h = request.headers as { get?: (n: string) => string | null; cookie?: string };
    return typeof h.get === 'function' ? (h.get('cookie') ?? undefined) : h.cookie;
  };
  const gate = createGate<{ headers: never }>({
    billing,
    access,
    account: (request) => accountOf(cookieOf(request), o.sessions),
    paywall: { signingKey: o.mock.signingKey, email: () => 'customer@example.com' },
  });
  let state = gate.state(o.view);
  let sent = '';
  const record = (chunk: string) => {
    sent += chunk;
  };
  const webhook = createNodeWebhookHandler({ access, onEvent: () => {} });
  let server: LoopbackServer;
  if (o.kind === 'hono') {
    const app = new Hono();
    app.get('/', (c) => c.html(PAGE));
    app.get('/page.js', (c) => c.body(o.script, 200, { 'content-type': 'text/javascript' }));
    app.get('/billing/state', (c) => state.hono(c));
    app.post(
      '/spend',
      gate.hono(
        { credits: { product_code: 'ai-assistant', meter_code: 'credits', quantity: 5 } },
        (c: Context) => c.text('ok'),
      ),
    );
    server = await serveHono(async (request) => tee(await app.fetch(request), record));
  } else {
    const app = express();
    app.use((_req, res, next) => {
      const write = res.write.bind(res);
      const end = res.end.bind(res);
      res.write = ((chunk: unknown, ...rest: never[]) => {
        record(Buffer.from(chunk as Uint8Array).toString());
        return write(chunk as never, ...rest);
      }) as typeof res.write;
      res.end = ((chunk?: unknown, ...rest: never[]) => {
        if (chunk && typeof chunk !== 'function') record(Buffer.from(chunk as Uint8Array).toString());
        return end(chunk as never, ...rest);
      }) as typeof res.end;
      next();
    });
    app.get('/', (_req, res) => void res.type('html').send(PAGE));
    app.get('/page.js', (_req, res) => void res.type('text/javascript').send(o.script));
    app.get('/billing/state', (req, res, next) => void state.express(req as never, res, next));
    app.post('/webhooks', (req, res) => webhook(req, res));
    server = await serveNode(app);
  }
  return {
    ...server,
    access,
    get state() {
      return state as AccountStateHandler<never>;
    },
    get sent() {
      return sent;
    },
    async dropStreams() {
      const old = state;
      state = gate.state(o.view);
      await old.close();
    },
    async close() {
      await state.close();
      await server.close();
      await access.close();
      await redis.close();
    },
  };
}

/** `response` with its body also read into `record` as it goes to the client. */
function tee(response: Response, record: (chunk: string) => void): Response {
  if (!response.body) return response;
  const [out, copy] = response.body.tee();
  void (async () => {
    const decoder = new TextDecoder();
    const reader = copy.getReader();
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return;
      record(decoder.decode(value, { stream: true }));
    }
  })();
  return new Response(out, { status: response.status, headers: response.headers });
}
