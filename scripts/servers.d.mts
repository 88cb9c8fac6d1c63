// Declarations of servers.mjs: starting redis-server, a replica, a Redis Cluster and PostgreSQL for the
// tests and the bench, and the child-process helpers they share.
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

/** A redis-server of the test's own, on a free loopback port, with nothing persisted. */
export interface RedisServer {
  port: number;
  url: string;
  /** Ends the server (SIGKILL if SIGTERM is not enough); resolves once it exited. */
  stop(): Promise<void>;
  /** Kills the server at once (SIGKILL: a crash, nothing flushed, no goodbye to clients); resolves once it exited. */
  kill(): Promise<void>;
}

/** Starts a redis-server on a free loopback port (nothing persisted). Fails when the binary is missing. */
export declare function startRedisServer(): Promise<RedisServer>;

/** A replica of a test's redis-server, on a free loopback port, with nothing persisted. */
export interface ReplicaServer {
  port: number;
  /** Freezes the replica (SIGSTOP): connected still, but it acknowledges nothing until {@link resume}. */
  pause(): void;
  /** Thaws a paused replica (SIGCONT). */
  resume(): void;
  /** Kills the replica (SIGKILL); resolves once it exited. */
  kill(): Promise<void>;
}

/** Starts a replica of the redis-server on `masterPort`; resolves once its first sync finished. */
export declare function startReplica(masterPort: number): Promise<ReplicaServer>;

/** How long a cluster node may be unreachable before the others count it failed, in ms. */
export declare const NODE_TIMEOUT_MS: number;

/** One node as the cluster saw it when it was created. */
export interface ClusterNode {
  port: number;
  pid: number;
  /** Its role when the cluster was made: a failover swaps a master and its replica. */
  role: 'master' | 'replica';
}

/** A running cluster. */
export interface RedisCluster {
  /** Every node, as created (3 masters first, then 3 replicas). */
  readonly nodes: readonly ClusterNode[];
  /** The masters, as clients want their seed list. */
  readonly rootNodes: readonly { host: string; port: number }[];
  /** The port of the master serving a slot (a number) or a key's slot (a string), asked of a live node now. */
  masterOf(slotOrKey: number | string): Promise<number>;
  /** The ports of the replicas of the master on `port`, asked of a live node now. */
  replicasOf(port: number): Promise<number[]>;
  /** Kills a node at once (SIGKILL: nothing flushed, no goodbye); resolves once it exited. */
  kill(port: number): Promise<void>;
  /** Starts a killed node again with its old identity (nodes.conf): it rejoins, as a replica of whoever took over. */
  restart(port: number): Promise<void>;
  /**
   * Resolves once every live node says `cluster_state:ok` and agrees on 3 live masters serving all
   * slots and on every other live node being a replica of one of them, and every live replica's
   * link to its master is up.
   */
  waitHealthy(ms?: number): Promise<void>;
  /** Runs redis-cli against a node (`CLUSTER`, `INFO`, `DEBUG` …): its output. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** Ends every node and removes the temp dir. */
  stop(): Promise<void>;
}

/** Starts a Redis Cluster (3 masters, 3 replicas); rejects, leaving no process behind, when not healthy in 30 s. */
export declare function startCluster(): Promise<RedisCluster>;

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
