import { defaultEngine } from './default-engine.js';

/**
 * Loads what a client's first request would load (ky; in Node the SDK's engine and undici) and
 * sends nothing. The SDK loads them on the first request so that importing it stays cheap, and the
 * client app pays nothing for this: only the access cache calls it, on its first lookup through a
 * shared store. That instance may go long without asking the service (the store answers it), and
 * its first request may then come right after an invalidation, with every instance waiting for its
 * answer (issue 28: the load took 60–190 ms on 2 cores, and every instance saw the invalidation
 * that much later). A user's own `fetch` or dispatcher makes part of it unneeded, never wrong.
 */
export async function warmRequestPath(): Promise<void> {
  const node = defaultEngine(undefined) !== undefined;
  await Promise.all([import('ky'), ...(node ? [import('./undici-engine.js'), import('undici')] : [])]);
}
