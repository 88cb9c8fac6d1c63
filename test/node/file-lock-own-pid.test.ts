// A container restarted after SIGKILL (or an OOM kill) runs the app with the same pid on the same
// hostname: the lock its previous run left names this very process. Not held by it, it is stale:
// taken over, and the leftovers sent. A second opener while the lock is held is still refused.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSpool } from '../../src/node/index.js';
import { caught } from '../helpers.js';
import { buildChild, spawnChild } from '../redis/processes.js';

let child: { file: string; remove(): void };
const dirs: string[] = [];
beforeAll(async () => {
  child = await buildChild('../node/lock-holder-child.ts');
}, 60_000);
afterAll(() => {
  child?.remove();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A spool directory left by a SIGKILLed run, its lock rewritten as if that run had had this pid. */
async function leftByKilledRunWithOurPid(count: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-own-pid-'));
  dirs.push(dir);
  const run = spawnChild(child.file, { DIR: dir, COUNT: String(count) });
  await run.next((m) => m.type === 'ready');
  await run.kill('SIGKILL');
  const lock = JSON.parse(readFileSync(join(dir, 'lock'), 'utf8')) as { pid: number; host: string };
  expect(lock.host).toBe(hostname());
  // The restarted container: the same hostname, and the app has the pid the killed one had.
  writeFileSync(join(dir, 'lock'), JSON.stringify({ pid: process.pid, host: hostname() }));
  return dir;
}

describe('fileSpool: a lock naming this process, left by a SIGKILLed run', () => {
  it('is taken over, and the leftovers are handed', async () => {
    const dir = await leftByKilledRunWithOurPid(3);
    const spool = fileSpool(dir);
    await spool.open();
    try {
      const left = await spool.take(10);
      expect(left.map((e) => e.event.event_key)).toEqual(['left-0', 'left-1', 'left-2']);
    } finally {
      await spool.close();
    }
  });

  it('a second opener while this process holds it is still refused (locked); after close it opens', async () => {
    const dir = await leftByKilledRunWithOurPid(1);
    const first = fileSpool(dir);
    await first.open();
    try {
      expect(await caught(() => fileSpool(dir).open())).toMatchObject({ name: 'SpoolError', code: 'locked' });
      // The same directory spelled another way is the same lock.
      expect(await caught(() => fileSpool(`${dir}/.`).open())).toMatchObject({ code: 'locked' });
    } finally {
      await first.close();
    }
    const second = fileSpool(dir);
    await second.open();
    expect((await second.take(10)).map((e) => e.event.event_key)).toEqual(['left-0']);
    await second.close();
  });
});
