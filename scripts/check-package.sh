#!/usr/bin/env bash
# Packaging gate: lints the package, checks its types for every resolution mode, then installs the
# packed tarball into a fresh project and uses it from ESM, CJS (also where Node cannot require ES
# modules) and TypeScript (node16 and bundler resolution, skipLibCheck off); runs the README's first
# snippet verbatim and the shipped demo, checks that the guides the README links are installed, and
# that `npm run build` in the installed copy cannot delete its dist/. Run after `npm run build`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

echo "== publint"
npx publint --strict

echo "== are the types wrong"
npx attw --pack . --profile node16

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
npm pack --silent --pack-destination "$work" >/dev/null
tarball="$(ls "$work"/billing-sdk-*.tgz)"
echo "== packed $(basename "$tarball"): $(tar -tzf "$tarball" | wc -l) files, $(du -k "$tarball" | cut -f1) KB"

app="$work/app"
mkdir -p "$app" && cd "$app"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent "$tarball" "@types/node@^20.19.0" >/dev/null

roundtrip='
  const server = await testing.startMockServer();
  try {
    const billing = new sdk.BillingClient({ apiKey: server.apiKey, baseUrl: server.baseUrl });
    let n = 0;
    for await (const _ of billing.invoices.list({ account_ref_id: "acct_active" })) n++;
    const link = await sdk.signHostedLink({ url: server.appUrl + "/p/pu_ebook", account_ref_id: "a", signingKey: server.signingKey });
    const { account_ref_id } = await sdk.verifyHostedLink(link, server.signingKey);
    if (n !== 45 || account_ref_id !== "a") throw new Error("unexpected: " + n + " " + account_ref_id);
    console.log("ok", n, "invoices, link for", account_ref_id);
  } finally { await server.close(); }'

echo "== ESM import"
node --input-type=module -e "import * as sdk from 'billing-sdk'; import * as testing from 'billing-sdk/testing'; $roundtrip"
echo "== CJS require"
node -e "const sdk = require('billing-sdk'); const testing = require('billing-sdk/testing'); (async () => { $roundtrip })().catch((e) => { console.error(e); process.exit(1); })"
echo "== CJS require with --no-experimental-require-module"
node --no-experimental-require-module -e "const sdk = require('billing-sdk'); const testing = require('billing-sdk/testing'); (async () => { $roundtrip })().catch((e) => { console.error(e); process.exit(1); })"

cat > usage.ts <<'TS'
import {
  BillingClient,
  type DebitResult,
  type Invoice,
  NotFoundError,
  type PagePromise,
  signHostedLink,
  subscriptionsOf,
} from 'billing-sdk';
import { type MockServer, startMockServer } from 'billing-sdk/testing';

export async function main(): Promise<void> {
  const server: MockServer = await startMockServer();
  const billing = new BillingClient({ apiKey: server.apiKey, baseUrl: server.baseUrl });
  const list: PagePromise<Invoice> = billing.invoices.list({ account_ref_id: 'acct_active', status: 'open' });
  for await (const invoice of list) invoice.amount_due.toFixed(2);
  const debit: DebitResult = await billing.usage.debit({ account_ref_id: 'a', product_code: 'p', meter_code: 'm', quantity: 1 });
  if (!debit.approved) debit.error_code.toUpperCase();
  subscriptionsOf(await billing.accounts.status({ account_ref_id: 'acct_multi' })).map((s) => s.is_active);
  await signHostedLink({ appUrl: server.appUrl, tierUrlId: 't', account_ref_id: 'a', signingKey: 'k' });
  const err: unknown = null;
  if (err instanceof NotFoundError) err.error?.toLowerCase();
  await server.close();
}
TS
cp usage.ts usage.mts
cp usage.ts usage.cts
tsc() { node "$root/node_modules/typescript/bin/tsc" "$@"; }
common='--noEmit --strict --skipLibCheck false --target es2022 --types node'
echo "== tsc node16 (ESM .mts and CJS .cts)"
tsc $common --module node16 --moduleResolution node16 usage.mts usage.cts
echo "== tsc bundler"
tsc $common --module esnext --moduleResolution bundler usage.ts

echo "== the README's first snippet, verbatim, from a fresh install"
node -e '
  const fs = require("fs");
  const first = fs.readFileSync(process.argv[1], "utf8").match(/```ts\n([\s\S]*?)```/)[1];
  fs.writeFileSync("quickstart.mjs", first);' "$root/README.md"
node quickstart.mjs | tee quickstart.out
grep -q 'active: true' quickstart.out

echo "== every file the README links relatively is in the installed copy (the guides)"
node -e '
  const fs = require("fs");
  const readme = fs.readFileSync("node_modules/billing-sdk/README.md", "utf8").replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "");
  const links = [...readme.matchAll(/\]\((guides\/[^)#\s]+)/g)].map((m) => m[1]);
  const missing = links.filter((link) => !fs.existsSync("node_modules/billing-sdk/" + link));
  if (links.length < 6 || missing.length) throw new Error("guides linked: " + links.length + ", missing: " + missing.join(", "));
  console.log("ok", new Set(links).size, "guides");'

echo "== the shipped demo runs from the installed copy"
(cd node_modules/billing-sdk && npm run demo --silent | tail -n 1)

echo "== npm run build inside the installed copy refuses and keeps dist/"
if (cd node_modules/billing-sdk && npm run build --silent 2>"$work/build.err"); then
  echo "build ran in an installed copy"
  exit 1
fi
grep -q 'installed copy' "$work/build.err"
test -f node_modules/billing-sdk/dist/index.js
echo "package gate passed"

echo "== npx billing-sdk-mock from the installed tarball: start, one API call, SIGTERM exits 0"
mock_out="$work/mock.out"
npx --no-install billing-sdk-mock --port 0 --json >"$mock_out" 2>"$work/mock.err" &
mock_pid=$!
mock_server_pid=""
# Whatever fails below, no server outlives the check.
trap 'kill -KILL "$mock_pid" ${mock_server_pid:+"$mock_server_pid"} 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
  [ -s "$mock_out" ] && break
  kill -0 "$mock_pid" 2>/dev/null || { cat "$work/mock.err"; echo "billing-sdk-mock exited early"; exit 1; }
  sleep 0.1
done
[ -s "$mock_out" ] || { cat "$work/mock.err"; echo "billing-sdk-mock printed nothing in 10 s"; exit 1; }
mock_line="$(head -n 1 "$mock_out")"
mock_base="$(node -e 'console.log(JSON.parse(process.argv[1]).baseUrl)' "$mock_line")"
mock_key="$(node -e 'console.log(JSON.parse(process.argv[1]).apiKey)' "$mock_line")"
# npx runs the bin through a shell that does not pass signals on: signal the server's own pid.
mock_server_pid="$(node -e 'console.log(JSON.parse(process.argv[1]).pid)' "$mock_line")"
node -e '
  const [base, key] = process.argv.slice(1);
  fetch(new URL("invoices/?account_ref_id=acct_active", base), { headers: { authorization: "Bearer " + key } })
    .then(async (r) => { const b = await r.json(); if (r.status !== 200 || b.count !== 45) throw new Error(r.status + " " + JSON.stringify(b).slice(0, 200)); console.log("ok", b.count, "invoices from", base); })
    .catch((e) => { console.error(e); process.exit(1); });' "$mock_base" "$mock_key"
kill -TERM "$mock_server_pid"
(sleep 10; kill -KILL "$mock_server_pid" 2>/dev/null) &
mock_watchdog=$!
mock_status=0
wait "$mock_pid" || mock_status=$?
kill "$mock_watchdog" 2>/dev/null || true
if [ "$mock_status" -ne 0 ]; then
  cat "$work/mock.err"
  echo "billing-sdk-mock exited $mock_status on SIGTERM"
  exit 1
fi
echo "billing-sdk-mock stopped with exit code 0"
