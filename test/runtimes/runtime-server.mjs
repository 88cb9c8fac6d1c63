// What the Deno and Bun entry points share (serve.mjs, test/gate/fixtures/gate-serve.mjs): the
// config the Node test passes as the first argument, a JSON-lines report on stdout, a server on a
// loopback port with the runtime's own API, and the end of stdin as the signal to stop (so a dead
// test runner leaves no orphan).

const { Deno, Bun } = globalThis;
const args = Deno ? Deno.args : Bun.argv.slice(2);

/** The Node test's config (the mock's address, keys, …). */
export const config = JSON.parse(args[0]);

/** One JSON line to the Node test. */
export const report = (message) => console.log(JSON.stringify(message));

/** Resolves when the Node test closes stdin. */
export async function stdinClosed() {
  const stream = Deno ? Deno.stdin.readable : Bun.stdin.stream();
  for await (const _chunk of stream) {
    // Nothing is ever sent: only the end of the stream matters.
  }
}

/** Serves `handler` on 127.0.0.1, an ephemeral port; resolves to its origin and a stop function. */
export async function serve(handler) {
  if (Deno) {
    const { promise, resolve } = Promise.withResolvers();
    // onListen also keeps Deno from printing its own "Listening on" line into the report stream.
    const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: resolve }, handler);
    const { port } = await promise;
    return { origin: `http://127.0.0.1:${port}`, stop: () => server.shutdown() };
  }
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: handler });
  return { origin: `http://127.0.0.1:${server.port}`, stop: () => server.stop() };
}

/** Ends the runtime after a failure: stderr reaches the test's message, the code says it was no clean stop. */
export function fail(error) {
  console.error(error?.stack ?? error);
  (Deno ? Deno : process).exit(1);
}
