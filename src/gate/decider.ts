import type { Idempotency } from './idempotency.js';
import type { PaywallLinks } from './links.js';
import type { GateOptions, GateRequest } from './types.js';

/** What one gate decides with: its options, and its links (shared by every route of the gate). */
export interface Decider<Req extends GateRequest> {
  options: GateOptions<Req>;
  links: PaywallLinks | undefined;
  /** Where the requests' `Idempotency-Key`s are claimed (gate/idempotency.ts). */
  keys: Idempotency<Req>;
  /** Whether a key's claim is renewed while the request is served (an adapter marks it after). */
  renewClaims: boolean;
}
