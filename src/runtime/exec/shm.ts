// V8 does not count SharedArrayBuffer memory as GC pressure: a long run that makes and frees
// large raw DFs would grow without bound (2000 × 1 MiB chain → 2 GiB). Each thread counts the
// shared bytes it dropped (system thread) or created (worker) and forces a collection after
// every LIMIT bytes, so the freed buffers' memory is returned.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const LIMIT = 64 * 1024 * 1024;

const collect: () => void = (() => {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : () => {};
  } catch { return () => {}; }
})();

let pending = 0;

/** Account `bytes` of shared memory made unreachable (or churned); collect past the limit. */
export function sharedBytesChurned(bytes: number): void {
  pending += bytes;
  if (pending >= LIMIT) { pending = 0; collect(); }
}
