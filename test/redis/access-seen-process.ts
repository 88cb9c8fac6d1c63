// One instance of an application gating a feature with createAccessCache on redisAccessStore, asking
// the mock over HTTP, for access-invalidation.test.ts: how long after `invalidate` on one instance
// each instance sees the account's new state, as a user would try it (each looking up every 2 ms).
// Prints {"type":"ready"} once connected and warmed up (one lookup: across the instances, one of
// them asks the service and the others read its answer from the store), then takes one JSON command
// a line on stdin and answers each with one JSON line. Times (`at`) are the host's clock in ms with
// sub-ms precision, comparable between processes of one host.
import { createInterface } from 'node:readline';
import { createClient } from 'redis';
import { redisAccessStore } from '../../src/redis/index.js';
import { warmUp, watchedAccessCache } from './access-child.js';
import { env, now, print, sleep } from './print.js';

const redis = createClient({ url: env('REDIS_URL') });
redis.on('error', () => {});
await redis.connect();

const store = redisAccessStore(redis, { prefix: env('PREFIX') });
const { access, onErrors } = watchedAccessCache(store, 60_000);

await warmUp(access, onErrors, env('WARM_ACCOUNT'));
print({ type: 'ready', pid: process.pid });

type Command =
  /** One isActive lookup: its value. */
  | { cmd: 'lookup'; id: number; account: string }
  /** isActive every 2 ms until it answers `expect`: when it did, and how many lookups it took. */
  | { cmd: 'until'; id: number; account: string; expect: boolean }
  /** access.invalidate: when it was called and when it resolved. */
  | { cmd: 'invalidate'; id: number; account: string };

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as Command;
  switch (command.cmd) {
    case 'lookup':
      print({
        type: 'looked',
        id: command.id,
        value: await access.isActive({ account_ref_id: command.account }),
      });
      break;
    case 'until':
      void (async () => {
        for (let lookups = 1; ; lookups++) {
          const value = await access.isActive({ account_ref_id: command.account });
          if (value === command.expect) {
            print({ type: 'seen', id: command.id, at: now(), lookups, onErrors: onErrors.length });
            return;
          }
          await sleep(2);
        }
      })();
      break;
    case 'invalidate': {
      const start = now();
      await access.invalidate(command.account);
      print({ type: 'invalidated', id: command.id, start, at: now() });
      break;
    }
  }
}
