// V8's own tiering budget, given back. On Node 20 `bin/luna` lowers V8's interrupt budget so that
// the runtime's per-fragment path is optimised within the first couple of thousand fragments
// (docs/runtime.md, "Tiering"). A program of long fragments gains nothing from that and pays for
// it: the functions marked early are compiled on V8's helper threads, which take CPU from the
// workers. `bin/luna` hands over the function that restores V8's budget under a symbol, as it
// does the collector (collector.ts); without it (a budget the user set, Node 22+, luna-ts used as
// a library or in the tests' harness) there is nothing to give back.

/** Where bin/luna leaves the function that restores V8's interrupt budget (a registered symbol). */
export const TIERING = Symbol.for('luna.tiering');

let relaxed = false;

/** Whether this process runs on a lowered budget that relaxTiering can give back. */
export function canRelaxTiering(): boolean {
  return !relaxed && typeof (globalThis as Record<symbol, unknown>)[TIERING] === 'function';
}

/**
 * Give V8 its own interrupt budget back, process-wide (worker threads too), once: functions
 * tier up by it from their next budget check. True when this call gave it back.
 */
export function relaxTiering(): boolean {
  if (!canRelaxTiering()) return false;
  ((globalThis as Record<symbol, unknown>)[TIERING] as () => void)();
  relaxed = true;
  return true;
}
