// The SDK's mock (demo data plus `accounts` active accounts acct_0…) in a process of its own, so that
// a scenario timing a request over loopback does not pay the server's CPU in its own process.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isMain, startMock } from './lib.mjs';

/** Starts it; resolves to `{ baseUrl, apiKey, stop }`. */
export function startMockProcess({ accounts = 0 } = {}) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), String(accounts)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`mock process exited ${code}`)));
    child.stdout
      .setEncoding('utf8')
      .once('data', (line) => resolve({ ...JSON.parse(line), stop: () => child.kill() }));
  });
}

if (isMain(import.meta)) {
  const mock = await startMock({ accounts: Number(process.argv[2]) });
  process.stdout.write(`${JSON.stringify({ baseUrl: mock.baseUrl, apiKey: mock.apiKey })}\n`);
  process.on('SIGTERM', () => process.exit(0));
}
