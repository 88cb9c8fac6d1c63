/**
 * The browser/worker build's `server.ts` (read that file first): tsup.config.ts compiles this
 * source in its place, and only in that build.
 */
import pRetry from 'p-retry';
import type { Dispatcher } from 'undici';
import type { DiagnosticsModule } from './diagnostics-module.js';
import type { Engine } from './engine.js';
import * as joseVerify from './jose-verify.js';

/** Browsers set their own user-agent and forbid overriding it; workers have none of the server runtimes. */
export function userAgent(): Record<string, string> {
  return {};
}

/** ky runs on the global fetch: no engine of the SDK's own. */
export function defaultEngine(_dispatcher: Dispatcher | undefined): Engine | undefined {
  return undefined;
}

/** Static here: a chunk of its own would cost an app more bytes than it saves. */
export async function loadPRetry(): Promise<typeof pRetry> {
  return pRetry;
}

/** Nothing to load ahead here: no undici, and ky's module start-up costs a browser little. */
export async function warmRequestPath(): Promise<void> {}

/** Static here, so a bundler drops it from apps that never verify (lazy, it would share signing's chunk). */
export async function loadJoseVerify(): Promise<typeof joseVerify> {
  return joseVerify;
}

/**
 * No import of a Node built-in here: workerd (with `nodejs_compat`) hands `node:diagnostics_channel`
 * out through `process.getBuiltinModule`; browsers have no `process`, so nothing is published there.
 */
export function diagnosticsModule(): DiagnosticsModule | undefined {
  const g = globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } };
  try {
    return g.process?.getBuiltinModule?.('node:diagnostics_channel') as DiagnosticsModule | undefined;
  } catch {
    return undefined;
  }
}
