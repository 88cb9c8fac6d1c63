// One instance of an application gating features with createAccessCache on redisAccessStore, asking
// the mock over HTTP. Prints {"type":"ready"} once connected and warmed up, then takes one JSON
// command a line on stdin and answers each with one JSON line (see the switch below). Every call of
// the store's watch listener is printed as {"type":"told","account","at"}: the moment this
// instance's cache dropped the account's answers. Times (`at`) are the host's clock in ms with
// sub-ms precision, comparable between processes of one host.
import { createInterface } from 'node:readline';
import { type RedisClient, redisAccessStore } from '../../src/redis/index.js';
import { warmUp, watchedAccessCache } from './access-child.js';
import { connectFromEnv } from './clients.js';
import { env, now, print } from './print.js';

// The client the test asked for (clients.ts): node-redis or ioredis, one node or a cluster.
const redis = await connectFromEnv();

const store = redisAccessStore(redis.client as RedisClient, {
  prefix: env('PREFIX'),
  timeoutMs: Number(env('REDIS_TIMEOUT_MS')),
});
const { access, onErrors } = watchedAccessCache(store, Number(env('TTL_MS')));

await warmUp(access, onErrors, env('WARM_ACCOUNT'));
print({ type: 'ready', pid: process.pid });

type Command =
  /** `n` concurrent isActive lookups of one account: the distinct answers, the errors, what onError was told. */
  | { cmd: 'lookup'; id: number; account: string; n: number }
  /** access.invalidate; answers with the time it resolved. */
  | { cmd: 'invalidate'; id: number; account: string }
  /** Lookups of `accounts` in turn, `concurrency` at a time, for `ms`: the answers per account, failures. */
  | { cmd: 'run'; id: number; accounts: string[]; ms: number; concurrency: number };

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as Command;
  switch (command.cmd) {
    case 'lookup': {
      const before = access.stats();
      const errorsBefore = onErrors.length;
      const settled = await Promise.allSettled(
        Array.from({ length: command.n }, () => access.isActive({ account_ref_id: command.account })),
      );
      const after = access.stats();
      print({
        type: 'looked',
        id: command.id,
        values: [...new Set(settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])))],
        errors: settled.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : [])),
        storeErrors: onErrors.slice(errorsBefore),
        misses: after.misses - before.misses,
        hits: after.hits - before.hits,
      });
      break;
    }
    case 'invalidate':
      await access.invalidate(command.account);
      print({ type: 'invalidated', id: command.id, at: now() });
      break;
    case 'run': {
      const deadline = Date.now() + command.ms;
      const answers: Record<string, unknown[]> = {};
      const failures: string[] = [];
      let lookups = 0;
      let slowest = 0;
      let next = 0;
      const worker = async () => {
        while (Date.now() < deadline) {
          const account = command.accounts[next++ % command.accounts.length]!;
          const started = now();
          try {
            const value = await access.isActive({ account_ref_id: account });
            const seen = answers[account] ?? [];
            answers[account] = seen;
            if (!seen.includes(value)) seen.push(value);
          } catch (error) {
            failures.push(String(error));
          }
          lookups++;
          slowest = Math.max(slowest, now() - started);
        }
      };
      const errorsBefore = onErrors.length;
      await Promise.all(Array.from({ length: command.concurrency }, worker));
      print({
        type: 'ran',
        id: command.id,
        lookups,
        answers,
        failures: failures.slice(0, 5),
        failed: failures.length,
        slowestMs: Math.round(slowest),
        onErrors: onErrors.length - errorsBefore,
        firstError: onErrors[errorsBefore] ?? null,
      });
      break;
    }
  }
}
