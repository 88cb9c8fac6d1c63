import type { Dispatcher } from 'undici';
import type { Engine } from './engine.js';

/**
 * ky's engine when the user gives no `fetch`: in Node, undici's dispatcher API, which costs far less
 * per request than Node's fetch (no WHATWG streams, no Request clone); elsewhere (Deno, Bun, and the
 * browser/worker build, which has none: see platform/server.ts) `undefined`, i.e. the global fetch.
 * The engine's module, and undici with it, is loaded on the first request.
 */
export function defaultEngine(dispatcher: Dispatcher | undefined): Engine | undefined {
  const g = globalThis as { Deno?: unknown; Bun?: unknown; process?: { versions?: { node?: string } } };
  if (g.Deno !== undefined || g.Bun !== undefined || !g.process?.versions?.node) return undefined;
  let engine: Promise<Engine> | undefined;
  return async (input, io) => {
    engine ??= import('./undici-engine.js').then((m) => m.undiciEngine(dispatcher));
    return (await engine)(input, io);
  };
}
