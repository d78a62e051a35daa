// Where the rank's worker and the layer's API module are: always the compiled modules under
// dist/src/spmd, even when this code runs from the CLI's bundle (dist/bundle), so that a rank's
// runtime and the program it imports share one instance of the API module.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function packageRoot(): string {
  let d = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(d, 'package.json')) && dirname(d) !== d) d = dirname(d);
  return d;
}

const ROOT = packageRoot();
export const RANK_WORKER = join(ROOT, 'dist', 'src', 'spmd', 'worker.js');
export const SPMD_API = join(ROOT, 'dist', 'src', 'spmd', 'index.js');
