// Bundle-size gate: builds two small apps against the built package as an app bundler would
// (esbuild, platform browser, minified, code splitting on) and measures what a browser downloads,
// gzipped. Exits 1 when a budget is exceeded. Run after `npm run build`: `npm run size`.
// The browser platform also proves the main entry needs no Node built-in: esbuild fails to resolve one.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * Each app's budget, in bytes of gzip, counted over every chunk its code path loads, lazy ones
 * included (ky loads on the first request). `skip` names the lazy chunks its path never loads: the
 * client app never signs a link, so jose's signing chunk is not downloaded.
 */
const apps = [
  // 25.5 KB, not the design's 24: parallel pagination, recordMany and the shared cooldown (issue 11)
  // add ~1.2 KB to every client, since a client's methods cannot be tree-shaken. Loading them on
  // first use was measured and is a net loss (the split-off shared chunk compresses ~0.8 KB worse).
  // 26.4 KB since issue 21 (25,474 -> 26,320 B): tracing on diagnostics_channel (~0.7 KB: the
  // channels, contexts, route templates and guarded publishes) is on every call's path (a tracer
  // subscribes by name at any time, so it cannot be left out of a bundle that makes calls), and
  // every constructor refuses options that are not a plain object (~0.1 KB).
  // 27.7 KB since issues 47, 49 and 51 (26,444 -> 27,683 B): Retry-After read strictly as RFC 9110
  // has it (the three HTTP-date forms, ~0.5 KB), every configured secret scrubbed from every part of
  // an answer and Location without its query (~0.3 KB), the page envelope and unusable-answer checks
  // and the short-list PaginationError (~0.4 KB): correctness and privacy every client needs.
  // 28.8 KB after the merge of wave 6 (27.7 -> 28.7 KB): every client keys its shared stores by a
  // digest of its API key and base URL (a synchronous SHA-256, util/sha256.ts, ~0.6 KB) and scopes its
  // cooldown at construction; the tracker's and gate's fixes add nothing here. Worth a look: load the
  // digest only where a shared store is given.
  { name: 'BillingClient + invoices.list', entry: 'client-app.js', budget: 28_800, skip: /jose-sign/ },
  // 6.1 KB since issue 51 (5,961 -> 6,037 B): only http(s) links are signed; appUrl joined with the URL API.
  { name: 'signHostedLink only', entry: 'sign-app.js', budget: 6_100, skip: undefined },
  // The access cache is a standalone function: the client app above does not grow. What it adds
  // here is the cache itself (lru-cache, ~5.9 KB gzip, was in it until issue 41).
  // 34.5 KB since issue 21: tracing, and the cache's lazy lru-cache (Node's import no longer loads it).
  // 34.6 KB since issues 26 and 28 (34,429 → 34,547 B), for a synchronous fresh-answer read (removed
  // in issue 34: 34,464 B now) and the warm-up of the request path on a shared store (+21 B).
  // 35.8 KB since issues 47, 49 and 51: the client's own growth (see above), nothing of the cache's.
  // 37.8 KB after wave 6: the client's growth (above) and the cache's prepared lookups and bounded options.
  // Issue 43: +60 B (37,698 -> 37,758 B): the cache's generations tell gate.state's streams of each move.
  // Issue 41: +76 B (37,752 -> 37,828 B): a lookup's per-call options read by name (the gate passes
  // { outcome } on every request: about 0.7 us less per Express request, npm run bench -- --gate).
  // Issue 41: 32.1 KB (37,828 -> 32,107 B): the answers kept in two maps of the cache's own
  // (access/answer-table.ts) instead of lru-cache, whose get cost a gated Express request ~1.5 us.
  { name: 'BillingClient + access cache', entry: 'access-app.js', budget: 32_200, skip: /jose-sign/ },
  // Credit holds are a standalone function too: the client app above does not grow. What they add
  // here is the holds, the hold and the memory store, ~2.1 KB (28,475 B at issue 37).
  // 29.8 KB since issues 47, 49 and 51: the client's own growth (see above), nothing of the holds'.
  // 32.1 KB after wave 6: the client's growth, hold.extend, the settle refusal and the stores' one argument check.
  // Issue 43: +52 B (32,039 -> 32,091 B): a settled hold tells gate.state's streams of the account.
  // +37 B (32,092 -> 32,129 B): the client keeps what the helpers read of it under a key every copy of
  // the package shares, not in private fields (billing-sdk/ai's bundle makes holds of an app's client).
  { name: 'BillingClient + credit holds', entry: 'holds-app.js', budget: 32_200, skip: /jose-sign/ },
  // The browser's account view (issue 43): the stream, its reconnects and its one error class; no
  // zod, ky or jose (.dependency-cruiser.cjs keeps src/view/ from importing them).
  // 1,658 -> 1,980 B after its review (its options checked in a function of their own, so that no
  // function is over 150 lines): answers that are not a state refused, listeners isolated
  // (onError), a refresh older than the stream's state dropped, the backoff reset only by a stream
  // that lasted, a stream without events bounded, a cut body an AccountViewError.
  { name: 'billing-sdk/view', entry: 'view-app.js', budget: 2_000, skip: undefined },
];

export async function measure() {
  const rows = [];
  for (const app of apps) {
    const outdir = mkdtempSync(join(tmpdir(), 'billing-size-'));
    try {
      const { metafile } = await build({
        entryPoints: [join(here, 'size', app.entry)],
        absWorkingDir: join(here, '..'),
        bundle: true,
        splitting: true,
        format: 'esm',
        platform: 'browser',
        minify: true,
        metafile: true,
        outdir,
        logLevel: 'error',
      });
      const outputs = metafile.outputs;
      const gz = (file) => gzipSync(readFileSync(join(here, '..', file)), { level: 9 }).length;
      const entry = Object.keys(outputs).find((f) => outputs[f].entryPoint?.endsWith(app.entry));
      const reach = (start, kinds) => {
        const seen = new Set();
        const visit = (file) => {
          if (seen.has(file)) return;
          seen.add(file);
          for (const i of outputs[file].imports) if (kinds.includes(i.kind) && outputs[i.path]) visit(i.path);
        };
        visit(start);
        return [...seen];
      };
      const initial = reach(entry, ['import-statement']).reduce((n, f) => n + gz(f), 0);
      const all = reach(entry, ['import-statement', 'dynamic-import']);
      const total = all.reduce((n, f) => n + gz(f), 0);
      const measured = all.filter((f) => !app.skip?.test(f)).reduce((n, f) => n + gz(f), 0);
      rows.push({ ...app, initial, total, measured, ok: measured <= app.budget });
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await measure();
  const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
  console.log('app (gzip)                      initial   all chunks   on its path   budget');
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(31)} ${kb(r.initial).padStart(8)} ${kb(r.total).padStart(12)} ${kb(r.measured).padStart(13)}   ${kb(r.budget)} ${r.ok ? 'ok' : 'OVER BUDGET'}`,
    );
  }
  if (rows.some((r) => !r.ok)) process.exit(1);
}
