// A high tiering budget for coarse fragments. On Node 20 `bin/luna` lowers V8's interrupt budget
// so that the runtime's per-fragment path is optimised within the first couple of thousand
// fragments (docs/runtime.md, "Tiering"). A program of long fragments gains nothing from that and
// pays for it: the functions marked early are compiled on V8's helper threads, which take CPU
// from the workers. `bin/luna` hands over the function that raises the budget (to 8 × V8's own;
// on Node 22+, whose V8 counts calls, the counts) under a symbol, as it does the collector
// (collector.ts); without it (a budget the user set, luna-ts used as a library or in the tests'
// harness) there is nothing to raise.

/** Where bin/luna leaves the function that raises V8's tiering budget or call counts (a registered symbol). */
export const TIERING = Symbol.for('luna.tiering');

let relaxed = false;

/** Whether this process runs on a lowered budget that relaxTiering can raise. */
export function canRelaxTiering(): boolean {
  return !relaxed && typeof (globalThis as Record<symbol, unknown>)[TIERING] === 'function';
}

/** Whether this process's budget has been raised already (by a node, or as the program loaded). */
export function tieringRelaxed(): boolean {
  return relaxed;
}

/**
 * Raise V8's interrupt budget, process-wide (worker threads too), once: functions tier up by it
 * from their next budget check. True when this call raised it.
 */
export function relaxTiering(): boolean {
  if (!canRelaxTiering()) return false;
  ((globalThis as Record<symbol, unknown>)[TIERING] as () => void)();
  relaxed = true;
  return true;
}
