/** Prints one message as a JSON line: how a child process talks to its test (see processes.ts). */
export function print(message: Record<string, unknown> & { type: string }): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}
