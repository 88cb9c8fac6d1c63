import { VERSION } from '../version.js';

/**
 * `user-agent: billing-sdk/<version> <runtime>/<version>` on server runtimes, so the service's
 * logs can tell SDK traffic and versions apart. Browsers set their own (and forbid overriding it),
 * so nothing is added there.
 */
export function userAgent(): Record<string, string> {
  const g = globalThis as {
    Deno?: { version?: { deno?: string | undefined } };
    Bun?: { version?: string | undefined };
    process?: { versions?: { node?: string | undefined } };
  };
  const runtime = g.Deno?.version?.deno
    ? `deno/${g.Deno.version.deno}`
    : g.Bun?.version
      ? `bun/${g.Bun.version}`
      : g.process?.versions?.node
        ? `node/${g.process.versions.node}`
        : undefined;
  return runtime ? { 'user-agent': `billing-sdk/${VERSION} ${runtime}` } : {};
}
