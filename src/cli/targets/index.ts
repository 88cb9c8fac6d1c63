import type { SpoolFlags } from '../args.js';
import { fileTarget } from './file.js';
import { postgresTarget } from './postgres.js';
import { redisTarget } from './redis.js';
import type { SpoolTarget, TargetOptions } from './target.js';

export type { Backlog, OtherSpool, SpoolTarget } from './target.js';

/** The spool the flags name, its backend connected (a {@link CliFailure} with exit 2 when it cannot be). */
export function openTarget(flags: SpoolFlags, options: TargetOptions): Promise<SpoolTarget> {
  if (flags.kind === 'postgres') return postgresTarget(flags, options);
  if (flags.kind === 'redis') return redisTarget(flags, options);
  return Promise.resolve(fileTarget(flags));
}
