// A file spool records when each entry was appended (what `doctor` reports as the backlog's age):
// logs written before that still read, and the time survives an aggregate and a compaction.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileSpool, oldestAppendedAt } from '../../src/node/file-spool.js';
import type { SpooledEvent } from '../../src/tracker/spool.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-file-spool-times-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const event = (key: string): SpooledEvent => ({
  account_ref_id: 'acct_active',
  product_code: 'api-gateway',
  meter_code: 'api_calls',
  quantity: 1,
  event_key: key,
});
const line = (id: number, key: string, at?: number) =>
  `${JSON.stringify({ t: 'e', id: String(id), ...(at === undefined ? {} : { at }), event: event(key) })}\n`;
const HOUR = 3_600_000;

describe('fileSpool: append times', () => {
  it('an old-format line (no time) is still read, its age unknown; new appends carry their time', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'spool.log'), line(1, 'old-a') + line(2, 'old-b'));
    const spool = fileSpool(dir);
    await spool.open();
    expect((await spool.take(10)).map((e) => e.event.event_key)).toEqual(['old-a', 'old-b']);
    expect(oldestAppendedAt(spool)).toBeUndefined();
    const before = Date.now();
    const [id] = await spool.append([event('new')]);
    const at = oldestAppendedAt(spool);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
    await spool.close();
    expect(readFileSync(join(dir, 'spool.log'), 'utf8')).toContain(`{"t":"e","id":"${id}","at":${at},`);
    const again = fileSpool(dir);
    await again.open();
    expect(oldestAppendedAt(again)).toBe(at);
    expect(await again.size?.()).toBe(3);
    await again.close();
  });

  it('the oldest live entry is reported; an acknowledged one no longer counts', async () => {
    const dir = tempDir();
    const now = Date.now();
    writeFileSync(join(dir, 'spool.log'), line(1, 'a', now - 2 * HOUR) + line(2, 'b', now - HOUR));
    const spool = fileSpool(dir);
    await spool.open();
    expect(oldestAppendedAt(spool)).toBe(now - 2 * HOUR);
    await spool.ack(['1']);
    expect(oldestAppendedAt(spool)).toBe(now - HOUR);
    await spool.ack(['2']);
    expect(oldestAppendedAt(spool)).toBeUndefined();
    await spool.close();
  });

  it('an aggregate keeps its oldest member time, and a compaction keeps every time', async () => {
    const dir = tempDir();
    const old = Date.now() - 2 * HOUR;
    // Twenty acknowledged entries, then two old live ones: past the threshold, mostly acknowledged.
    let log = '';
    for (let i = 1; i <= 20; i++) log += line(i, `gone-${i}`, old);
    log += `${JSON.stringify({ t: 'a', ids: Array.from({ length: 20 }, (_, i) => String(i + 1)) })}\n`;
    log += line(21, 'x', old) + line(22, 'y', old + 1000);
    writeFileSync(join(dir, 'spool.log'), log);
    const spool = fileSpool(dir, { compactAfterBytes: 1 });
    await spool.open();
    const aggregate = await spool.replace(['21', '22'], event('xy'));
    expect(oldestAppendedAt(spool)).toBe(old);
    await spool.close();
    const text = readFileSync(join(dir, 'spool.log'), 'utf8');
    expect(text).not.toContain('gone-');
    const again = fileSpool(dir);
    await again.open();
    expect((await again.take(10)).map((e) => e.id)).toEqual([aggregate]);
    expect(oldestAppendedAt(again)).toBe(old);
    await again.close();
  });

  it('a time that is not a number is a corrupt record', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'spool.log'), line(1, 'a').replace('"t":"e",', '"t":"e","at":"yesterday",'));
    await expect(fileSpool(dir).open()).rejects.toMatchObject({ name: 'SpoolError', code: 'corrupt' });
  });
});
