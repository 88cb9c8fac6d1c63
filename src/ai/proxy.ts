/**
 * A proxy of `target` whose properties named in `replace` are what `replace` makes of them (made
 * once, on first read); every other property is the target's own, its methods bound to the target
 * (a client's methods read its private fields, which a proxy as `this` does not have), unless
 * `keepThis`: then they run with the proxy as `this`, so that a method calling `this.create`
 * (Anthropic's `messages.stream`) reaches the metered one.
 */
export function wrapObject<T extends object>(
  target: T,
  replace: Record<string, (value: unknown) => unknown>,
  keepThis = false,
): T {
  const made = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(t, prop, receiver) {
      if (made.has(prop)) return made.get(prop);
      const value: unknown = Reflect.get(t, prop, keepThis ? receiver : t);
      const make = typeof prop === 'string' && Object.hasOwn(replace, prop) ? replace[prop] : undefined;
      let out = value;
      if (make && value !== undefined && value !== null) out = make(value);
      else if (typeof value === 'function' && !keepThis) out = value.bind(t);
      else return value;
      made.set(prop, out);
      return out;
    },
  });
}
