import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** luna-ts version from package.json (src/core/ and dist/src/core/ find it alike). */
export function version(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(fileURLToPath(new URL(rel, import.meta.url)), 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'luna-ts') return pkg.version;
    } catch { /* try the next */ }
  }
  return '?';
}
