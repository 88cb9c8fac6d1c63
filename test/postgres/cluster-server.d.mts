// Declarations of cluster-server.mjs: the PostgreSQL cluster harness the tests and the bench share.

/**
 * Debian's PostgreSQL 15, else the newest version installed (what .ci/run's apt gave); `PG_BIN`
 * points at another bin directory. vitest.config.ts imports it (the Postgres files are left out without it).
 */
export declare const PG_BIN: string;

/** A PostgreSQL cluster of the caller's own: a temp data directory, a free loopback port, trust auth. */
export interface PostgresCluster {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  /** Ends the server (fast shutdown, SIGKILL if that is not enough) and removes its directory. */
  stop(): Promise<void>;
  /** Kills the postmaster at once (SIGKILL: a crash, clients cut off); resolves once it exited. The data stays. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and data (after `kill`, or stopping it first if it runs). */
  restart(): Promise<void>;
}

/**
 * Starts a PostgreSQL cluster of the caller's own (initdb as the `postgres` user when run as root).
 * Fails when the binaries are missing. Every postmaster still running and every directory made are
 * gone when the process exits.
 */
export declare function startPostgres(): Promise<PostgresCluster>;
