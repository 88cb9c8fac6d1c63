import calculateSlot from 'cluster-key-slot';
import type { Rule } from '../internal/checks.js';
import { isWellFormed } from '../util/well-formed.js';

/**
 * Key names and hash tags of `billing-sdk/redis`, so every part runs on a Redis Cluster with its
 * default options.
 *
 * A Redis Cluster spreads keys over 16 384 slots, each served by one master, and refuses
 * (`CROSSSLOT`) a script or a MULTI whose keys lie in different slots. A key's slot is the CRC16
 * of its hash tag, the text between its first `{` and the next `}` (when not empty), else of the
 * whole key. The rule here: every key one atomic step touches carries the same tag, which the SDK
 * chooses (users never put one in a prefix), and the tag is as narrow as the step allows, so load
 * spreads over the masters:
 * - `redisAccessStore`: an account's answers, leases, generation and index share the account's
 *   tag, `<prefix>{<account>}:…` (accounts spread over the whole cluster); the invalidation
 *   stream and its counter share the store's tag, `<prefix>{<prefix>}:…`, one slot per prefix
 *   where every instance finds them. No script mixes the two: `invalidate` is two steps.
 * - `redisCooldown`: its three keys share the prefix's tag, `<prefix>{<prefix>}:…`: one slot per
 *   cooldown (per API key, when each has its prefix).
 * - `redisDedupeStore` and `redisSpool`: every script touches one key (the delivery id's, the
 *   stream), which is never `CROSSSLOT`; so no tag: ids hash whole and spread over every master.
 *
 * A tag's text is the string with `%`, `{` and `}` percent-encoded (so no string ends a tag early
 * and two strings never share one), `%` for the empty string (an empty tag `{}` would not count).
 *
 * A prefix that holds a tag of its own (`'app:{tenant}:'`) wins: Redis hashes the first tag of a
 * key, so every key of the part goes to that one slot. Everything still works (one slot is never
 * `CROSSSLOT`), but that part's load is then on one master. A prefix with an empty `{}` before
 * any tag is refused: Redis would hash each key whole.
 *
 * @module
 */

/** A string as the text of a hash tag: `%`, `{` and `}` percent-encoded; `%` when empty. */
export function tagText(value: string): string {
  if (value === '') return '%';
  return value.replace(/[%{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `<prefix>{<tag>}`: the start of every key of an atomic step tagged by `tag`. */
export function tagged(prefix: string, tag: string): string {
  return `${prefix}{${tagText(tag)}}`;
}

/**
 * The rule of a key prefix: a string without a lone surrogate, and without an empty `{}` where
 * Redis would look for the key's hash tag (it would then hash each key whole, and a step's keys
 * would land in different slots).
 */
export const keyPrefix: Rule = (v) => {
  if (typeof v !== 'string') return 'must be a string';
  if (!isWellFormed(v)) return 'must not contain a lone UTF-16 surrogate';
  const open = v.indexOf('{');
  if (open >= 0 && v[open + 1] === '}')
    return "must not contain an empty hash tag '{}' (Redis Cluster would then hash each key whole)";
  return undefined;
};

/**
 * The slot of a key as Redis Cluster computes it (CRC16 of its hash tag, else of the whole key, mod
 * 16 384), by `cluster-key-slot`: the function node-redis and ioredis route commands with, so the
 * SDK and the client never disagree on where a key lives.
 */
export const keySlot: (key: string) => number = calculateSlot;
