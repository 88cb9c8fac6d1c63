import { sha256Hex } from './sha256.js';

/**
 * Names the service a client talks to, for stores that several clients may share (a Redis, a
 * database): a digest of its API key and base URL, so a sandbox key's answers are never served to
 * the live client, nor one deployment's to another, and the key itself is never written anywhere.
 * 32 hex characters (128 bits of SHA-256): the same for every process of one service.
 *
 * @param apiKey - The client's key, as resolved (printable ASCII without spaces: the newline below
 * cannot occur in it, so no two pairs give one input).
 * @param baseUrl - The client's normalised base URL.
 */
export function serviceNamespace(apiKey: string, baseUrl: string): string {
  return sha256Hex(`billing-sdk service\n${apiKey}\n${baseUrl}`).slice(0, 32);
}

/**
 * A store or cooldown whose content comes from the service: `forService` gives the instance that
 * serves one service (its keys under that service's namespace: a digest of its API key and base URL, never the key). The client, the
 * access cache and the credit holds call it once, when they are made, with their client's namespace.
 */
export interface ServiceScoped<T> {
  /** This store (or cooldown) for the service named `service`; the object itself is left as it was. */
  forService(service: string): T;
}

/** `value` for `service` when it can be scoped (see {@link ServiceScoped}), else `value` itself. */
export function scopedTo<T>(value: T, service: string): T {
  const scoped = value as Partial<ServiceScoped<T>> | null | undefined;
  return typeof scoped?.forService === 'function' ? scoped.forService(service) : value;
}
