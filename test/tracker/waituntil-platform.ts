/**
 * A serverless platform as far as the SDK can tell: it keeps every promise handed to `waitUntil`
 * and, once all of them settled (those handed while waiting included), the instance is done: the
 * test then drops the tracker without `close()`, as a frozen function or a finished isolate does.
 */
export interface PlatformStandIn {
  /** The platform's `waitUntil`. */
  readonly waitUntil: (promise: Promise<unknown>) => void;
  /** Promises handed so far. */
  readonly handed: number;
  /** Promises that rejected (the SDK's never should). */
  readonly rejected: number;
  /** Resolves once every promise handed settled, those handed meanwhile included. */
  settled(): Promise<void>;
}

/** A fresh {@link PlatformStandIn}. */
export function platform(): PlatformStandIn {
  const held: Promise<unknown>[] = [];
  let rejected = 0;
  return {
    waitUntil(promise) {
      held.push(
        promise.then(
          () => {},
          () => {
            rejected++;
          },
        ),
      );
    },
    get handed() {
      return held.length;
    },
    get rejected() {
      return rejected;
    },
    async settled() {
      for (let seen = 0; seen < held.length; ) {
        const upTo = held.length;
        await Promise.all(held.slice(seen, upTo));
        seen = upTo;
      }
    },
  };
}
