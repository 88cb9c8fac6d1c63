import { CONTROL_PREFIX } from '../control/resource.js';
import type { MockServer } from '../types.js';

/** What `billing-sdk-mock` prints once it listens: everything a client of another process needs. */
export interface StartupInfo {
  /** API root, e.g. `http://127.0.0.1:4010/api/`. */
  baseUrl: string;
  /** Origin of hosted pages and invoice links. */
  appUrl: string;
  /** Root of the control surface, e.g. `http://127.0.0.1:4010/_mock/`. */
  controlUrl: string;
  /** The only API key accepted, by the API and by the control surface. */
  apiKey: string;
  /** Secret hosted-link tokens are verified with. */
  signingKey: string;
  /** Receiver of lifecycle webhooks registered at start, or null. */
  webhookUrl: string | null;
  /**
   * The server's process id: the one to signal when it was started through `npx` or a shell, whose
   * own process may not pass SIGTERM on.
   */
  pid: number;
}

/** The start-up facts of a running server in process `pid`. */
export function startupInfo(server: MockServer, webhookUrl: string | undefined, pid: number): StartupInfo {
  return {
    baseUrl: server.baseUrl,
    appUrl: server.appUrl,
    controlUrl: new URL(`${CONTROL_PREFIX}/`, server.baseUrl).href,
    apiKey: server.apiKey,
    signingKey: server.signingKey,
    webhookUrl: webhookUrl ?? null,
    pid,
  };
}

/** The `--json` form: exactly one line, for scripts to read. */
export function formatJson(info: StartupInfo): string {
  return `${JSON.stringify(info)}\n`;
}

/** The default, human-readable form. */
export function formatHuman(info: StartupInfo, version: string, seed: string): string {
  return [
    `billing-sdk-mock ${version} listening (seed ${seed})`,
    `  API          ${info.baseUrl}`,
    `  hosted pages ${info.appUrl}`,
    `  control      ${info.controlUrl}`,
    `  API key      ${info.apiKey}`,
    `  signing key  ${info.signingKey}`,
    `  webhooks     ${info.webhookUrl ?? '(no receiver; PUT /_mock/webhooks/receiver to register one)'}`,
    `Press Ctrl-C to stop (or send SIGTERM to process ${info.pid}).`,
    '',
  ].join('\n');
}
