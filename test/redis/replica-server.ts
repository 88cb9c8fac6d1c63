// The starter is scripts/servers.mjs (plain JS, shared with the bench).
export { type ReplicaServer, startReplica } from '../../scripts/servers.mjs';
