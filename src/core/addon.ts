// Where the native addons and helpers built at install time are: build/Release/<file> under the package
// root, the nearest ancestor of this module that has one (src/core/ in a checkout run by tsx,
// dist/src/core/ once compiled).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function addonPath(name: string): string | undefined {
  return builtFile(`${name}.node`);
}

/**
 * The addon `name`, or undefined when it is not built or does not load: for addons whose absence
 * only makes something slower or unavailable (those that must say why load it themselves).
 */
export function loadAddon<T>(name: string): T | undefined {
  const path = addonPath(name);
  if (path === undefined) return undefined;
  try { return createRequire(import.meta.url)(path) as T; } catch { return undefined; }
}

/** A file built at install time into build/Release (an addon, a native helper program). */
export function builtFile(file: string): string | undefined {
  const rel = join('build', 'Release', file);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 7; i++) {
    const p = join(dir, rel);
    if (existsSync(p)) return p;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}
