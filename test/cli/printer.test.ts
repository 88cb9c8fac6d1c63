// What the commands print, by where stdout goes: a terminal gets a status line rewritten in place
// (cleared before any other line), a pipe gets plain lines, --json one object per line.
import { describe, expect, it } from 'vitest';
import { Printer } from '../../src/cli/printer.js';
import { describeReport } from '../../src/cli/progress.js';

function streams(isTTY: boolean) {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = { isTTY, write: (s: string) => out.push(s) > 0 } as unknown as NodeJS.WriteStream;
  const stderr = { write: (s: string) => err.push(s) > 0 } as unknown as NodeJS.WritableStream;
  return { out, err, printer: (json: boolean) => new Printer(json, { stdout, stderr }) };
}

describe('Printer', () => {
  it('on a terminal: the status line is rewritten in place, and cleared before a line or a warning', () => {
    const { out, err, printer } = streams(true);
    const p = printer(false);
    expect(p.live).toBe(true);
    p.status('sent 1');
    p.status('sent 2');
    p.warn('the spool is out of reach');
    p.text('stopped');
    expect(out).toEqual(['\r\x1b[Ksent 1', '\r\x1b[Ksent 2', '\r\x1b[K', 'stopped\n']);
    expect(err).toEqual(['billing-sdk: the spool is out of reach\n']);
  });

  it('to a pipe: each status is a line of its own; --json: objects, one per line, never a status', () => {
    const pipe = streams(false);
    pipe.printer(false).status('sent 1');
    expect(pipe.out).toEqual(['sent 1\n']);
    const tty = streams(true);
    const json = tty.printer(true);
    expect(json.live).toBe(false);
    json.data({ type: 'progress', recorded: 1 });
    expect(tty.out).toEqual(['{"type":"progress","recorded":1}\n']);
  });

  it('a report reads as one line, with the oldest age only when events are left', () => {
    const base = { recorded: 12, retried: 1, deadLettered: 0 };
    expect(describeReport({ type: 'progress', ...base, left: 3, oldestMs: 2_400 })).toBe(
      'sent 12 · retried 1 · dead-lettered 0 · left 3 (oldest 2 s)',
    );
    expect(describeReport({ type: 'done', ...base, left: 0, oldestMs: 0 })).toBe(
      'stopped: sent 12 · retried 1 · dead-lettered 0 · left 0',
    );
  });
});
