import * as diagnosticsChannel from 'node:diagnostics_channel';
import type { DiagnosticsModule } from './diagnostics-module.js';

/** Node, Deno and Bun all have `node:diagnostics_channel`; the server builds import it. */
export function diagnosticsModule(): DiagnosticsModule | undefined {
  return diagnosticsChannel as DiagnosticsModule;
}
