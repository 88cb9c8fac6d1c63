import { letterMeta, parseLetter } from '../tracker/dead-letter-record.js';
import type { DeadLetter } from '../tracker/spool.js';
import type { DeadLetterStorage } from '../tracker/spool-core.js';
import { keySlot } from './keys.js';
import { DEAD_LETTER, DROP_LETTERS, FIELD, LETTER, LIST_LETTERS, REPLAY_LETTERS } from './lua/spool.js';

/** Stream entry ids: others are never sent to Redis (a script would fail on them). */
export const isStreamId = (id: string): boolean => /^\d+-\d+$/.test(id);

/**
 * The key of the dead-letter stream beside `stream`, in its slot (a script moves entries between
 * the two, which Redis Cluster allows only within one slot): `<stream>:dead-letters` when that
 * hashes alike (the stream has a hash tag), else `{<stream>}:dead-letters`; for a name with braces
 * that are no hash tag (`a}b`), `<stream>:dead-letters:<n>` with the first `n` that lands there.
 */
export function deadLetterKey(stream: string): string {
  const slot = keySlot(stream);
  for (const key of [`${stream}:dead-letters`, `{${stream}}:dead-letters`])
    if (keySlot(key) === slot) return key;
  // 16 384 slots: a match comes within some tens of thousands of tries, once per spool.
  for (let n = 0; ; n++)
    if (keySlot(`${stream}:dead-letters:${n}`) === slot) return `${stream}:dead-letters:${n}`;
}

/**
 * The storage steps of a `redisSpool`'s dead letters, each one Lua script: `run(script, keys,
 * args)` runs it with the stream and the dead-letter stream ({@link deadLetterKey}) as its keys.
 */
export function deadLetterStorage(
  group: string,
  run: (script: string, args: (string | number)[]) => Promise<unknown>,
): DeadLetterStorage {
  const idsOf = (reply: unknown): string[] => (Array.isArray(reply) ? reply.map(String) : []);
  const chosen = (ids: readonly string[] | 'all'): string[] => (ids === 'all' ? ['all'] : ['ids', ...ids]);
  return {
    isEntryId: isStreamId,
    isLetterId: isStreamId,
    async move(entries) {
      const args: string[] = [group];
      for (const { id, ...letter } of entries) args.push(id, letterMeta(letter));
      await run(DEAD_LETTER, args);
    },
    async list(max) {
      const reply = await run(LIST_LETTERS, [max ?? 0]);
      const out: DeadLetter[] = [];
      for (const entry of Array.isArray(reply) ? reply : []) {
        const [id, fields] = entry as [unknown, unknown];
        const values = new Map<string, unknown>();
        if (Array.isArray(fields))
          for (let i = 0; i + 1 < fields.length; i += 2) values.set(String(fields[i]), fields[i + 1]);
        const letter = parseLetter(String(id), values.get(FIELD), values.get(LETTER));
        if (letter) out.push(letter);
      }
      return out;
    },
    replay: async (ids) => idsOf(await run(REPLAY_LETTERS, chosen(ids))),
    drop: async (ids) => idsOf(await run(DROP_LETTERS, chosen(ids))),
  };
}
