import { describe, expect, it } from 'vitest';
import { type Cooldown, type CooldownGrant, MAX_COOLDOWN_MS } from '../../src/index.js';

/** A cooldown under test, its clock, and how to let time pass for it. */
export interface CooldownSubject {
  cooldown: Cooldown;
  now(): number;
  /** Lets `ms` pass (a fake clock moves; for Redis, real time passes). */
  advance(ms: number): Promise<void>;
}

type Release = Extract<CooldownGrant, { release: unknown }>;

/** Short enough to wait out with Redis; long enough that a slow machine still sees it running. */
const WINDOW = 200;

/**
 * The {@link Cooldown} contract where the in-process and the Redis cooldown agree: cooldown after
 * a 429 with Retry-After, one probe after the window, the rest held until it is answered.
 */
export function cooldownContract(name: string, subject: () => Promise<CooldownSubject>): void {
  const acquire = async (s: CooldownSubject): Promise<CooldownGrant> => s.cooldown.acquire(s.now());
  const go = async (s: CooldownSubject): Promise<Release> => {
    const grant = await acquire(s);
    if (!('release' in grant)) throw new Error(`expected to go, told ${JSON.stringify(grant)}`);
    return grant;
  };
  /** A 429 with Retry-After reported through a fresh grant, then the window waited out. */
  const cooledDown = async (s: CooldownSubject): Promise<void> => {
    await (await go(s)).release(s.now(), WINDOW);
    await s.advance(WINDOW + 20);
  };

  describe(`${name}: the Cooldown contract`, () => {
    it('lets everything through until a 429 with Retry-After; a 429 without one starts nothing', async () => {
      const s = await subject();
      for (let i = 0; i < 5; i++) await (await go(s)).release(s.now(), undefined);
      await go(s);
      await (await go(s)).release(s.now(), undefined);
      await go(s);
    });

    it('after a 429 with Retry-After, every request is told to wait, at most the window', async () => {
      const s = await subject();
      const grants = [await go(s), await go(s)];
      await grants[0]!.release(s.now(), WINDOW);
      await grants[1]!.release(s.now(), WINDOW / 2); // a shorter one does not cut the window
      const waits = await Promise.all([acquire(s), acquire(s)]);
      for (const grant of waits) {
        expect('waitMs' in grant && grant.waitMs > WINDOW / 2 && grant.waitMs <= WINDOW).toBe(true);
      }
    });

    it('after the window one request probes; others are held until it answers, then go', async () => {
      const s = await subject();
      await cooledDown(s);
      const probe = await go(s);
      const held = acquire(s);
      await probe.release(s.now(), undefined);
      const answer = await held;
      // In process the waiter is woken (wait 0); through Redis it is told to ask again shortly.
      expect('waitMs' in answer && answer.waitMs <= 50).toBe(true);
      await go(s);
      await go(s);
    });

    it('a refused probe opens a new window for everyone', async () => {
      const s = await subject();
      await cooledDown(s);
      const probe = await go(s);
      const held = acquire(s);
      await probe.release(s.now(), WINDOW);
      expect('waitMs' in (await held)).toBe(true);
      const next = await acquire(s);
      expect('waitMs' in next && next.waitMs > WINDOW / 2).toBe(true);
      await s.advance(WINDOW + 20);
      await (await go(s)).release(s.now(), undefined); // the next probe succeeds: over
      await go(s);
    });

    it('a Retry-After of ten years holds requests at most MAX_COOLDOWN_MS (one hour)', async () => {
      const s = await subject();
      await (await go(s)).release(s.now(), 315_360_000_000);
      const held = await acquire(s);
      expect('waitMs' in held && held.waitMs > MAX_COOLDOWN_MS - 60_000).toBe(true);
      expect('waitMs' in held && held.waitMs <= MAX_COOLDOWN_MS).toBe(true);
    });
  });
}
