import { randomBytes } from 'node:crypto';
import { link, readFile, realpath, rename, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { SpoolError } from '../core/errors/index.js';
import { ignoreMissing } from './fs.js';

/** The lock's file name in the spool's directory. */
const LOCK = 'lock';

/** A lock this process holds: its path, and the content it wrote there (to know it is still its own). */
export interface FileLock {
  path: string;
  content: string;
}

interface LockHolder {
  pid: number;
  host: string;
}

/**
 * The locks this process holds now, by path. A lock naming this process's pid and host that is not
 * here was left by an earlier process that had the same pid (a container restarted after SIGKILL or
 * an OOM kill runs the app as pid 1 again, on the same hostname): it is stale, not ours.
 */
const heldHere = new Set<string>();

/** Whether the process that wrote `path`'s lock may still run (one on another host cannot be checked). */
function holderAlive(holder: LockHolder | undefined, path: string): holder is LockHolder {
  if (!holder) return false;
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return heldHere.has(path);
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseHolder(content: string): LockHolder | undefined {
  try {
    const v = JSON.parse(content) as Partial<LockHolder>;
    if (Number.isSafeInteger(v.pid) && typeof v.host === 'string') return v as LockHolder;
  } catch {}
  return undefined;
}

/**
 * Takes `dir/lock`: its content (pid and host) is written to a temporary file that is then
 * hard-linked to the lock's name, which fails if the lock exists, so a lock is never seen empty.
 * A lock whose process is dead, or that names this process but is not held by it (left by an
 * earlier process with the same pid: see `heldHere`), is moved aside and checked to be the one judged stale (another
 * opener may have replaced it meanwhile: it is then put back) before the next try.
 *
 * @throws {@link SpoolError} `'locked'` while a live process (or one on another host) holds it.
 */
export async function takeLock(dir: string): Promise<FileLock> {
  // One key per directory however it is spelled (relative, a symlink), for `heldHere`.
  const path = join(await realpath(dir).catch(() => resolve(dir)), LOCK);
  const content = JSON.stringify({ pid: process.pid, host: hostname() });
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`;
  await writeFile(tmp, content);
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        await link(tmp, path);
        heldHere.add(path);
        return { path, content };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      let seen: string;
      try {
        seen = await readFile(path, 'utf8');
      } catch (error) {
        ignoreMissing(error);
        continue;
      }
      const holder = parseHolder(seen);
      if (holderAlive(holder, path)) {
        throw new SpoolError(
          'locked',
          `fileSpool: ${dir} is in use by process ${holder.pid} on ${holder.host} (${path}); one process at a time may use a spool directory`,
        );
      }
      const aside = `${path}.stale.${process.pid}.${randomBytes(6).toString('hex')}`;
      try {
        await rename(path, aside);
      } catch (error) {
        ignoreMissing(error);
        continue;
      }
      if ((await readFile(aside, 'utf8')) !== seen) await link(aside, path).catch(() => undefined);
      await unlink(aside);
    }
    throw new SpoolError('locked', `fileSpool: could not take ${path}: other processes keep taking it`);
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

/** Removes the lock if it is still ours. */
export async function releaseLock(lock: FileLock): Promise<void> {
  heldHere.delete(lock.path);
  try {
    if ((await readFile(lock.path, 'utf8')) === lock.content) await unlink(lock.path);
  } catch {}
}
