import { type FileHandle, open, unlink } from 'node:fs/promises';

/** Writes all of `buf` at the handle's position (a write may take only part of it). */
export async function writeAll(handle: FileHandle, buf: Buffer): Promise<void> {
  let offset = 0;
  while (offset < buf.length) {
    const { bytesWritten } = await handle.write(buf, offset, buf.length - offset);
    offset += bytesWritten;
  }
}

/** Makes a rename or a file creation in `dir` durable (a no-op where directories cannot be synced: Windows). */
export async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Rethrows `error` unless it says the file was not there (`ENOENT`). */
export function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
}

/**
 * Writes `data` at the handle's position and syncs it. When that fails, closes the handle and
 * removes `path` (a partial copy), and resolves `false`.
 */
export async function writeSynced(handle: FileHandle, path: string, data: Buffer): Promise<boolean> {
  try {
    await writeAll(handle, data);
    await handle.datasync();
    return true;
  } catch {
    await handle.close().catch(() => undefined);
    await unlink(path).catch(() => undefined);
    return false;
  }
}

/**
 * Creates `path` anew (one left by a crash is removed first) holding `data`, synced: its open
 * handle, or `undefined` when that failed (nothing is left behind).
 */
export async function createSynced(path: string, data: Buffer): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    await unlink(path).catch(ignoreMissing);
    handle = await open(path, 'ax');
  } catch {
    await unlink(path).catch(() => undefined);
    return undefined;
  }
  return (await writeSynced(handle, path, data)) ? handle : undefined;
}
