/**
 * The longest delay `setTimeout` keeps: a larger one (or `Infinity`) overflows to about 1 ms in
 * every runtime, so a "wait forever" would fire at once. Delays past it are not scheduled at all.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Lets the process exit while `timer` is pending (Node, Bun, Deno): a background wait of the SDK
 * never keeps an app alive. A no-op where timers are numbers (browsers, workers).
 */
export function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
