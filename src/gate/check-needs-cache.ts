/**
 * `gate.check(request, need)` is given its need on every call, and checking and preparing it (its
 * lookups, see `access.prepare`) was most of a check answered from memory: the p99 went from 6 to
 * 38 µs when the lookups became prepared. The adapters prepare a route once; this does the same for
 * `gate.check`, keyed by the need object itself (a WeakMap: nothing kept after the app drops it).
 *
 * A need object changed after its first check must not be answered by its old preparation (a gate
 * that allows what the app now refuses), so each hit compares the object with a snapshot of what
 * was prepared: plain values, arrays and objects by content, to a small depth, functions by
 * identity. It allocates nothing; a need that differs is checked and prepared again.
 */

/** How deep a need's plain data is compared (a list of needs, a need, its credits or usage list, one item). */
const DEPTH = 5;

type Snapshot = unknown;

/** A copy of `value`'s plain data (objects and arrays copied, everything else as it is). */
function snapshot(value: unknown, depth: number): Snapshot {
  if (typeof value !== 'object' || value === null || depth === 0) return value;
  if (Array.isArray(value)) return value.map((v) => snapshot(v, depth - 1));
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    copy[key] = snapshot((value as Record<string, unknown>)[key], depth - 1);
  return copy;
}

/** Whether `value` still holds what `shot` copied. */
function same(value: unknown, shot: Snapshot, depth: number): boolean {
  if (typeof value !== 'object' || value === null || depth === 0) return Object.is(value, shot);
  if (typeof shot !== 'object' || shot === null) return false;
  if (Array.isArray(value)) {
    if (!Array.isArray(shot) || shot.length !== value.length) return false;
    for (let i = 0; i < value.length; i++) if (!same(value[i], shot[i], depth - 1)) return false;
    return true;
  }
  if (Array.isArray(shot)) return false;
  const copy = shot as Record<string, unknown>;
  let keys = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    keys++;
    if (!Object.hasOwn(copy, key) || !same((value as Record<string, unknown>)[key], copy[key], depth - 1))
      return false;
  }
  return keys === Object.keys(copy).length;
}

/**
 * The checked needs of `need`, prepared once per need object while its content stays the same.
 * `prepare` throws as it would uncached (a bad need is never cached).
 */
export function cachedNeeds<N extends object, C>(prepare: (need: N) => C): (need: N) => C {
  const cache = new WeakMap<object, { shot: Snapshot; checked: C }>();
  return (need) => {
    if (typeof need !== 'object' || need === null) return prepare(need);
    const hit = cache.get(need);
    if (hit && same(need, hit.shot, DEPTH)) return hit.checked;
    const checked = prepare(need);
    cache.set(need, { shot: snapshot(need, DEPTH), checked });
    return checked;
  };
}
