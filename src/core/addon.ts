// Where the native addons built at install time are: build/Release/<name>.node under the package
// root, the nearest ancestor of this module that has one (src/core/ in a checkout run by tsx,
// dist/src/core/ once compiled).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function addonPath(name: string): string | undefined {
  const rel = join('build', 'Release', `${name}.node`);
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
