/**
 * Calls a user's callback (a reporter, `onError`, `onDeadLetter`): one that throws or rejects never
 * changes the SDK's result, and its rejection is never left unhandled. Resolves when it settles.
 */
export function safely(fn: (() => unknown) | undefined): Promise<void> {
  if (!fn) return Promise.resolve();
  try {
    return Promise.resolve(fn()).then(
      () => {},
      () => {},
    );
  } catch {
    return Promise.resolve();
  }
}
