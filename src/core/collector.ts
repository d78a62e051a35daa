// V8's collector, called on purpose. `bin/luna` runs node with --expose-gc and hands the function
// over under a symbol, removing the global `gc` it made, so ucodes see none. Without it (luna-ts
// used as a library, the tests' in-process harness) nothing is collected on purpose.

/** Where bin/luna leaves the collector (a registered symbol: the CLI's bundle and modules share it). */
export const COLLECTOR = Symbol.for('luna.collector');

type Collector = (o?: { type?: 'minor' | 'major' }) => void;

/** Collect the young generation now; false when no collector was handed over. */
export function collectYoung(): boolean {
  const gc = (globalThis as Record<symbol, unknown>)[COLLECTOR];
  if (typeof gc !== 'function') return false;
  (gc as Collector)({ type: 'minor' });
  return true;
}

/**
 * Remove the global `gc` that --expose-gc gives every thread (the flag is process-wide): a worker
 * thread's ucodes see none either. The runtime never collects on purpose from a worker.
 */
export function hideCollector(): void {
  const g = globalThis as { gc?: unknown };
  if (typeof g.gc === 'function') g.gc = undefined;
}
