import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildChild } from '../redis/processes.js';

// Issue 41 §4: a queued event is small and flat, so a long queue costs little heap and the
// scavenger has little to copy. Measured in a child process under --expose-gc (a full collection
// before and after), with the service unreachable so that every event stays queued.
describe('a queued event is small and flat', () => {
  it('100,000 events queued on the memory spool cost at most 300 bytes of heap each', async () => {
    const child = await buildChild('../tracker/queued-heap-child.ts');
    try {
      const out = execFileSync(process.execPath, ['--expose-gc', child.file], {
        encoding: 'utf8',
        env: { ...process.env, COUNT: '100000' },
        timeout: 60_000,
      });
      const line = out.split('\n').find((l) => l.startsWith('{')) as string;
      const { perEvent, queued } = JSON.parse(line) as { perEvent: number; queued: number };
      expect(queued).toBe(100_010);
      expect(perEvent).toBeLessThanOrEqual(300);
    } finally {
      child.remove();
    }
  }, 90_000);
});
