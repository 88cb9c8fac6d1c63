// The app server of the gate mode (`npm run bench -- --gate`, started by gate.mjs): one real framework
// app, Express 5 or Hono 4 on @hono/node-server, with the routes of gate-routes.mjs (the same handler
// without the gate, behind a no-op middleware, behind the gate, wrapped by the gate), and the billing service it asks (the SDK's embedded mock, in this process: after the first request
// of each account every answer comes from the access cache, so the mock is idle while measured).
// Usage: node gate-app.mjs '{"framework":"express"|"hono"}'. Prints `{"port":N}` once listening;
// exits when its stdin closes (the parent died or is done).
//
//   GET /plain, /noop, /gated, /wrapped   the routes of gate-routes.mjs
//   GET /__bench/stats  control: this process's CPU time (µs) and the mock's status and resolve
//                       request counts, answered by the same framework
//
// Who asks comes from the `x-account` header and the e-mail from `x-email`, as a session would give them.
import { expressRoutes, honoRoutes } from './gate-routes.mjs';
import { mockedAccess } from './gate-shared.mjs';

const { framework } = JSON.parse(process.argv[2] ?? '{}');

// Answers and links kept longer than the run: every measured request is answered from memory.
const { mock, billing, access } = await mockedAccess();

/** What the control route answers. */
function stats() {
  const { user, system } = process.cpuUsage();
  return {
    cpuUs: user + system,
    status: mock.requests.count({ method: 'GET', path: '/api/account/' }),
    resolve: mock.requests.count({ method: 'GET', path: '/api/resolve/public-url/' }),
  };
}

/** Express 5 on node:http. @returns {Promise<import('node:http').Server>} */
async function expressApp() {
  const app = await expressRoutes({ mock, billing, access });
  app.get('/__bench/stats', (_req, res) => res.json(stats()));
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** Hono 4 on @hono/node-server. @returns {Promise<import('node:http').Server>} */
async function honoApp() {
  const { serve } = await import('@hono/node-server');
  const app = await honoRoutes({ mock, billing, access });
  app.get('/__bench/stats', (c) => c.json(stats()));
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(server));
  });
}

const apps = { express: expressApp, hono: honoApp };
if (!apps[framework])
  throw new Error(`framework must be ${Object.keys(apps).join(' or ')}, got ${framework}`);
const server = await apps[framework]();
process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);

// A safety net: a server left behind stops by itself.
setTimeout(() => process.exit(2), 30 * 60_000).unref();
process.stdin.on('data', () => {});
process.stdin.on('end', async () => {
  server.closeAllConnections?.();
  server.close();
  await access.close();
  await mock.close();
  process.exit(0);
});
