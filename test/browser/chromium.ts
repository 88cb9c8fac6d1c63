import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium, which .ci/run installs. */
const executablePath = '/usr/bin/chromium';

/**
 * Whether Chromium is here. Without it a browser test is skipped with its reason printed, except
 * in CI, which installs it in .ci/run: there a missing browser is a failure, not a skip.
 */
export function hasChromium(test: string): boolean {
  if (existsSync(executablePath)) return true;
  const reason = `${test} skipped: no Chromium at ${executablePath} (apt-get install -y chromium)`;
  if (process.env.CI) throw new Error(`${reason}; CI must run it`);
  console.warn(reason);
  return false;
}

/** Headless Chromium with the flags this machine needs (no sandbox as root, no background traffic). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
