/**
 * Resolves on the first SIGTERM or SIGINT: the command stops cleanly from there. A second one
 * calls `now` (stop at once: what was under way stays in a durable spool).
 */
export function stopSignals(now: () => void): Promise<void> {
  return new Promise((resolve) => {
    let signalled = false;
    const stop = () => {
      if (signalled) return now();
      signalled = true;
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
