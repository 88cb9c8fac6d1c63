// Entry point for Deno and Bun (`deno run serve.mjs <config>`, `bun serve.mjs <config>`): runs the
// scenario, then serves the webhook receiver on a loopback port with the runtime's own server, and
// reports to the Node test as JSON lines on stdout:
//   {"type":"results",...}  {"type":"listening","url":...}  {"type":"event",...} per event
// The same server answers GET /tracing with tracing.mjs's results, run when the test asks (so its
// calls never overlap the scenario's, which the test counts).
// It stops when stdin closes, so the test ends it cleanly (and a dead test runner leaves no orphan).
import { createReceiver, runScenario } from './scenario.mjs';
import { runTracing } from './tracing.mjs';

const { Deno, Bun } = globalThis;
const args = Deno ? Deno.args : Bun.argv.slice(2);
const config = JSON.parse(args[0]);

const report = (message) => console.log(JSON.stringify(message));

async function stdinClosed() {
  const stream = Deno ? Deno.stdin.readable : Bun.stdin.stream();
  for await (const _chunk of stream) {
    // Nothing is ever sent: only the end of the stream matters.
  }
}

/** Serves `handler` on 127.0.0.1, an ephemeral port; resolves to its URL and a stop function. */
async function serve(handler) {
  if (Deno) {
    const { promise, resolve } = Promise.withResolvers();
    // onListen also keeps Deno from printing its own "Listening on" line into the report stream.
    const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: resolve }, handler);
    const { port } = await promise;
    return { url: `http://127.0.0.1:${port}/webhooks/billing`, stop: () => server.shutdown() };
  }
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: handler });
  return { url: `http://127.0.0.1:${server.port}/webhooks/billing`, stop: () => server.stop() };
}

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
  report({ type: 'listening', url: server.url });
  await stdinClosed();
  await server.stop();
} catch (error) {
  // stderr reaches the test's failure message; the exit code tells it this was not a clean stop.
  console.error(error?.stack ?? error);
  (Deno ? Deno : process).exit(1);
}
