// Where `luna run` and `luna check` keep compiled programs (program/front-cache.ts): beside
// bin/luna's code cache, under NODE_COMPILE_CACHE or the temporary directory, never in the
// source tree. `--no-cache` or LUNA_PROGRAM_CACHE=off turns it off.
import { join } from 'node:path';
import { cacheRoot } from './code-cache.js';

/** The cache's directory; undefined when turned off; an error message for a bad LUNA_PROGRAM_CACHE. */
export function programCacheDir(enabled: boolean, env: NodeJS.ProcessEnv = process.env): { dir: string | undefined } | { error: string } {
  const v = env.LUNA_PROGRAM_CACHE;
  if (v !== undefined && !['', 'on', 'off', '1', '0'].includes(v)) return { error: `LUNA_PROGRAM_CACHE must be on or off, got ${JSON.stringify(v)}` };
  return { dir: enabled && v !== 'off' && v !== '0' ? join(cacheRoot(env), 'programs') : undefined };
}
