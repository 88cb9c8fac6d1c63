// Declarations of servers.mjs: the helpers every server harness of the tests (and the bench, through
// test/postgres/cluster-server.mjs) shares.
import type { ChildProcess } from 'node:child_process';

/** A port free on 127.0.0.1 now (another process may still take it before the caller binds it). */
export declare function freePort(): Promise<number>;

/** Resolves once `child` exited (at once when it already has). */
export declare function exited(child: ChildProcess): Promise<void>;

/** Has `child` killed (SIGKILL) when the process exits, however it exits, while it still runs; returns it. */
export declare function killOnExit<T extends ChildProcess>(child: T): T;

/** Kills `child` at once (SIGKILL: a crash, nothing flushed); resolves once it exited. */
export declare function killNow(child: ChildProcess): Promise<void>;

/** Sends `signal`, then SIGKILL when the child has not exited within `graceMs`; resolves once it exited. */
export declare function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals,
  graceMs: number,
): Promise<void>;

/**
 * Resolves once the child's output (stdout and stderr) matches `ready`; rejects (and kills the child)
 * when it exits first, fails to spawn, or `ms` pass, with `<name> did not start: <why>` and the output.
 */
export declare function waitForOutput(
  child: ChildProcess,
  options: { name: string; ready: RegExp; ms: number; waitingFor?: string },
): Promise<void>;
