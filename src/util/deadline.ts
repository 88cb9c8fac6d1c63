/**
 * `promise`, or a rejection with `late()` once `ms` passed: a store whose server hangs fails its
 * caller on time instead of holding it (the work behind `promise` goes on; its outcome is dropped).
 *
 * The limit is the server's, not this process's: when the process was busy past it (a module
 * loading, a long parse), the reply that came meanwhile and the expired timer are ready together,
 * and timers run before sockets are read. So the timer gives the reply one more turn of the event
 * loop before it fails the call.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, late: () => Error): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    // `late` runs only for a call still unanswered after that turn: it may act (a Postgres cancel
    // names a connection, not a statement, and sent late would cancel the next one).
    const timer = setTimeout(() => setTimeout(() => settled || reject(late()), 0), ms);
    promise.then(
      (value) => {
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
