import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SpoolError } from '../../src/core/errors/index.js';
import { fileSpool } from '../../src/node/file-spool.js';
import { deadLetters } from '../../src/tracker/dead-letters.js';
import { spooledEvent } from '../tracker/spool-contract.js';

const root = mkdtempSync(join(tmpdir(), 'billing-sdk-file-dead-letters-'));
afterAll(() => rm(root, { recursive: true, force: true }));

const reason = { type: 'error' as const, name: 'BadRequestError', message: 'no such meter', status: 400 };
const meta = {
  reason,
  attempts: 2,
  firstAttemptAt: '2026-01-01T00:00:00.000Z',
  deadLetteredAt: '2026-01-01T00:00:01.000Z',
};

/** A spool directory holding `log` and `letters` as a crashed process left them. */
async function leftBehind(name: string, log: string, letters: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  writeFileSync(join(dir, 'spool.log'), log);
  writeFileSync(join(dir, 'dead-letters.log'), letters);
  return dir;
}

describe('fileSpool dead letters: dead-letters.log beside the log', () => {
  it('a move a crash cut in two (letter kept, entry not yet acknowledged) is finished by the next open: the entry is never handed again', async () => {
    const [a, b] = [spooledEvent(0), spooledEvent(1)];
    const dir = await leftBehind(
      'cut',
      `{"t":"e","id":"1","event":${JSON.stringify(a)}}\n{"t":"e","id":"2","event":${JSON.stringify(b)}}\n`,
      `{"t":"d","id":"1","from":"1","event":${JSON.stringify(a)},"letter":${JSON.stringify(meta)}}\n`,
    );
    const spool = fileSpool(dir);
    await spool.open();
    expect((await spool.take(10)).map((entry) => entry.event)).toEqual([b]);
    expect(await deadLetters(spool).list()).toEqual([{ id: '1', event: a, ...meta }]);
    await spool.close();
    // The acknowledgement is in the log now: a second open finds the same.
    expect(readFileSync(join(dir, 'spool.log'), 'utf8')).toContain('{"t":"a","ids":["1"]}');
    const again = fileSpool(dir);
    await again.open();
    expect((await again.take(10)).map((entry) => entry.event)).toEqual([b]);
    await again.close();
  });

  it('a torn last letter (a crash mid-append: its move never resolved) is dropped; ids are never given twice, even after a drop', async () => {
    const a = spooledEvent(0);
    const dir = await leftBehind(
      'torn',
      `{"t":"e","id":"1","event":${JSON.stringify(a)}}\n`,
      `{"t":"d","id":"1","from":"7","event":${JSON.stringify(a)},"letter":${JSON.stringify(meta)}}\n{"t":"d","id":"2","fr`,
    );
    const spool = fileSpool(dir);
    await spool.open();
    const letters = deadLetters(spool);
    expect((await letters.list()).map((letter) => letter.id)).toEqual(['1']);
    expect(await letters.drop('all')).toEqual(['1']);
    const [entry] = await spool.take(10);
    await spool.deadLetter?.([{ id: entry!.id, ...meta }]);
    const [kept] = await letters.list();
    expect(kept?.id).toBe('2'); // not 1 again: a list read before the drop cannot name the new letter
    expect(kept?.event).toEqual(a);
    await spool.close();
    const again = fileSpool(dir);
    await again.open();
    expect((await deadLetters(again).list()).map((letter) => letter.id)).toEqual(['2']);
    expect(await again.take(10)).toEqual([]);
    await again.close();
  });

  it('a letter line that is not one, before the last, is a SpoolError corrupt at open (never skipped silently)', async () => {
    const dir = await leftBehind('corrupt', '', '{"t":"x"}\n{"t":"s","next":3}\n');
    const error = await fileSpool(dir)
      .open()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(SpoolError);
    expect((error as SpoolError).code).toBe('corrupt');
    expect((error as SpoolError).message).toContain('dead-letters.log');
  });
});
