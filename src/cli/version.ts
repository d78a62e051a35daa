import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** luna-ts version from package.json. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as { version: string };
  return pkg.version;
}
