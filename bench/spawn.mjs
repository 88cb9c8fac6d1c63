// Runs a child `node` process with a hard time limit and collects its output. Every measurement of the
// harness happens in such a child, so this is the one place that bounds them all in time.
import { spawn } from 'node:child_process';
import { RESULT_PREFIX } from './shared.mjs';

/**
 * @typedef {object} ChildRun
 * @property {number | null} code
 * @property {string} stdout
 * @property {string} stderr
 * @property {boolean} timedOut
 */

/**
 * `node ...args` in `cwd`, killed (SIGKILL) after `timeoutMs`.
 * @param {string[]} args
 * @param {{cwd: string, timeoutMs: number}} options
 * @returns {Promise<ChildRun>}
 */
export function runNode(args, { cwd, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (s) => {
      stdout += s;
    });
    child.stderr.setEncoding('utf8').on('data', (s) => {
      stderr += s;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

/**
 * The child's `BENCH_RESULT {json}` line, parsed; throws with the child's stderr when there is none.
 * @param {ChildRun} run
 * @param {string} what  for the message
 */
export function resultOf(run, what) {
  const line = run.stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
  if (run.code === 0 && line) return JSON.parse(line.slice(RESULT_PREFIX.length));
  const why = run.timedOut ? 'timed out' : `exited with ${run.code}`;
  const detail = run.stderr.trim().split('\n').slice(0, 6).join('\n');
  throw new Error(`${what} ${why}${detail ? `:\n${detail}` : ''}`);
}

/**
 * One measurement in a fresh child: `node [--expose-gc] script '<options as JSON>'`, its result line parsed.
 * @param {string} script
 * @param {Record<string, unknown>} options
 * @param {{cwd: string, timeoutMs: number, what: string, gc?: boolean}} how  `what` names it in errors
 */
export async function runChild(script, options, { cwd, timeoutMs, what, gc = false }) {
  const args = [...(gc ? ['--expose-gc'] : []), script, JSON.stringify(options)];
  return resultOf(await runNode(args, { cwd, timeoutMs }), what);
}

/**
 * What a mode's runner needs: `child(options, timeoutMs, what, gc?)` runs `script` in a fresh child
 * with the server's port added to its options; `attempt(part, fn)` runs one part unless --skip names
 * it, and records its failure in `failures[part]` (logged) rather than stopping the run.
 * @param {{script: string, port: number, cwd: string, log: (msg: string) => void, skip: Set<string>, failures: Record<string, string>}} o
 */
export function modeRunner(o) {
  return {
    child: (options, timeoutMs, what, gc = false) =>
      runChild(o.script, { port: o.port, ...options }, { cwd: o.cwd, timeoutMs, what, gc }),
    attempt: async (part, fn) => {
      if (o.skip.has(part)) return;
      try {
        await fn();
      } catch (err) {
        o.failures[part] = String(err.message ?? err);
        o.log(`${part} FAILED: ${o.failures[part]}`);
      }
    },
  };
}

/**
 * `node script ...args` in `cwd`, a server that prints one JSON line when it listens (its port, and
 * what else it reports) and stops when its stdin closes, so it cannot outlive this process.
 * Resolves with that line's fields and `stop()`; rejects when it exits first or is silent 15 s.
 * @param {string} what  for the messages
 * @param {string[]} args  the script and its arguments
 * @param {string} cwd
 * @returns {Promise<Record<string, any> & {stop: () => Promise<void>}>}
 */
export function startServing(what, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s) => {
      stderr += s;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not start within 15 s: ${stderr}`));
    }, 15_000);
    let buffered = '';
    child.stdout.setEncoding('utf8').on('data', (s) => {
      buffered += s;
      const nl = buffered.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      const stop = () =>
        new Promise((done) => {
          const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
          child.once('exit', () => {
            clearTimeout(kill);
            done();
          });
          child.stdin.end();
        });
      resolve({ ...JSON.parse(buffered.slice(0, nl)), stop });
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before printing its port: ${stderr.trim()}`));
    });
  });
}
