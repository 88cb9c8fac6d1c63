/**
 * `billing-sdk/node`: helpers that need Node's own modules (the file system), kept out of the main
 * entry so that its browser/worker build stays free of Node built-ins.
 *
 * @module billing-sdk/node
 */

export { SpoolError, type SpoolErrorCode } from '../core/errors/index.js';
export { type FileSpoolOptions, fileSpool } from './file-spool.js';
