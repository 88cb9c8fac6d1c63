// CPU profile of one client under load: `node bench/profile.mjs [client] [seconds]` (default
// billing-sdk, 5). Starts the bench server in its own process, runs the client at concurrency 32 in a
// child under `node --cpu-prof`, then prints CPU µs per request and where the samples fall: by
// package (self time) and the busiest functions. The .cpuprofile is kept for Chrome DevTools.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_KEY, PATH, QUERY, SEARCH } from './shared.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const CONCURRENCY = 32;

if (process.argv[2] === '--child') {
  // The profiled process: warm up, then loop for the given time and report CPU per request.
  const [, , , name, port, seconds] = process.argv;
  const client = await import(`./clients/${name}.mjs`);
  const call = await client.create({
    origin: `http://127.0.0.1:${port}`,
    port: Number(port),
    apiKey: API_KEY,
    path: PATH,
    query: QUERY,
    search: SEARCH,
  });
  const loop = async (ms) => {
    const end = Date.now() + ms;
    let n = 0;
    const worker = async () => {
      while (Date.now() < end) {
        await call();
        n++;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return n;
  };
  await loop(2000);
  const before = process.cpuUsage();
  const n = await loop(Number(seconds) * 1000);
  const used = process.cpuUsage(before);
  console.log(`${name}: ${n} requests, ${((used.user + used.system) / n).toFixed(0)} µs CPU per request`);
} else {
  const [name = 'billing-sdk', seconds = '5'] = process.argv.slice(2);
  const server = spawn(process.execPath, [join(here, 'server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise((resolve) =>
    server.stdout.once('data', (d) => resolve(JSON.parse(String(d)).port)),
  );
  const dir = mkdtempSync(join(tmpdir(), 'billing-profile-'));
  const child = spawn(
    process.execPath,
    [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      fileURLToPath(import.meta.url),
      '--child',
      name,
      String(port),
      seconds,
    ],
    { stdio: 'inherit' },
  );
  await new Promise((resolve) => child.once('exit', resolve));
  server.stdin.end();
  const file = join(
    dir,
    readdirSync(dir).find((f) => f.endsWith('.cpuprofile')),
  );
  summarise(JSON.parse(readFileSync(file, 'utf8')));
  console.log(`profile: ${file}`);
}

/** Self time by package and by function, as shares of all samples. */
function summarise(profile) {
  const time = new Map();
  for (const [i, id] of profile.samples.entries())
    time.set(id, (time.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const total = [...time.values()].reduce((a, b) => a + b, 0);
  const byPackage = new Map();
  const byFunction = new Map();
  for (const node of profile.nodes) {
    const t = time.get(node.id) ?? 0;
    const { url, functionName, lineNumber } = node.callFrame;
    const pkg =
      url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ??
      (url.includes('/dist/')
        ? 'billing-sdk'
        : url.startsWith('node:')
          ? 'node internals'
          : url
            ? 'other'
            : 'native, GC, idle');
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + t);
    const fn = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + t);
  }
  const show = (title, map, n) => {
    console.log(title);
    for (const [k, v] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n))
      console.log(`  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
  };
  show('self time by package:', byPackage, 8);
  show('busiest functions:', byFunction, 20);
}
