/**
 * `billing-sdk/view`: the signed-in customer's billing state in the browser, live, without a key.
 * It reads the app's `gate.state` endpoint; nothing else of the SDK is in it (no zod, ky or jose).
 *
 * @module
 */
export { AccountViewError } from '../core/errors/view.js';
export type { AccountState } from '../gate/state-types.js';
export { type AccountView, type AccountViewOptions, createAccountView } from './view.js';
