// Entry point for Deno and Bun (`deno run serve.mjs <config>`, `bun serve.mjs <config>`): runs the
// scenario, then serves the webhook receiver on a loopback port with the runtime's own server, and
// reports to the Node test as JSON lines on stdout:
//   {"type":"results",...}  {"type":"listening","url":...}  {"type":"event",...} per event
// The same server answers GET /tracing with tracing.mjs's results, run when the test asks (so its
// calls never overlap the scenario's, which the test counts).
// It stops when stdin closes, so the test ends it cleanly (and a dead test runner leaves no orphan).

import { config, fail, report, serve, stdinClosed } from './runtime-server.mjs';
import { createReceiver, runScenario } from './scenario.mjs';
import { runTracing } from './tracing.mjs';

try {
  report({ type: 'results', ...(await runScenario(config)) });
  const receiver = createReceiver(config, (seen) => report({ type: 'event', ...seen }));
  const server = await serve(async (request) => {
    if (new URL(request.url).pathname !== '/tracing') return receiver(request);
    try {
      return Response.json(await runTracing(config));
    } catch (error) {
      // The test prints this body when it fails: the runtime's own stack, not just a status.
      return Response.json({ error: String(error?.stack ?? error) }, { status: 500 });
    }
  });
  report({ type: 'listening', url: `${server.origin}/webhooks/billing` });
  await stdinClosed();
  await server.stop();
} catch (error) {
  fail(error);
}
