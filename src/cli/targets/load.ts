import { CliFailure } from '../fail.js';

/** Whether `error` says that `name` itself is not installed (not a module it imports). */
function isMissing(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    message.includes(`'${name}'`)
  );
}

/**
 * Imports an optional peer dependency (a database driver) on first use: the bin runs without any
 * of them until a flag needs one. `undefined` when it is not installed; any other failure to load
 * it is thrown.
 */
export async function optionalImport<T>(name: string, load: () => Promise<T>): Promise<T | undefined> {
  try {
    return await load();
  } catch (error) {
    if (isMissing(error, name)) return undefined;
    throw error;
  }
}

/** The failure for a flag whose driver is not installed (exit 2): what it needs, what to install. */
export const missingDriver = (flag: string, needs: string, install: string): CliFailure =>
  new CliFailure(`${flag} needs ${needs}, which is not installed here: npm install ${install}`);

/** Rejects with a {@link CliFailure} when `step` takes longer than `ms` (a server that never answers). */
export function within<T>(ms: number, what: string, step: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([step, late]).finally(() => clearTimeout(timer));
}
