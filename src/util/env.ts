/**
 * Reads an environment variable where one exists (Node, Bun, Deno with --allow-env) and
 * returns `undefined` elsewhere: browsers and workers have no `process`, and Deno throws
 * without the permission.
 */
export function readEnv(name: string): string | undefined {
  try {
    const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[
      name
    ];
    return value?.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** True in a browser window (not a worker, not a server runtime): an API key there is visible to users. */
export function isBrowserWindow(): boolean {
  const g = globalThis as { window?: unknown; document?: unknown };
  return typeof g.window !== 'undefined' && typeof g.document !== 'undefined';
}
