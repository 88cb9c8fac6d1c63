import { expect } from 'vitest';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `condition` holds; fails, naming `what`, after `ms`. */
export async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  ms = 10_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(2);
  }
}

/**
 * A negative check as a bounded poll, not a bare sleep: polls `condition` for `ms` and fails at
 * once, naming `what`, if it ever turns false.
 */
export async function holdsFor(what: string, condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!condition()) throw new Error(`no longer true: ${what}`);
    await sleep(10);
  }
  expect(condition(), what).toBe(true);
}
