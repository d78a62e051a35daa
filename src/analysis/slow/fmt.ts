// Number formatting shared by the table and the interpretation.

export function dur(ns: number): string {
  const a = Math.abs(ns);
  if (a >= 1e9) return `${(ns / 1e9).toFixed(3)} s`;
  if (a >= 1e6) return `${(ns / 1e6).toFixed(3)} ms`;
  if (a >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${Math.round(ns)} ns`;
}

export function pct(x: number, digits = 1): string {
  return `${x.toFixed(digits)}%`;
}

/** share in [0, 1] → "42%" */
export function share(x: number): string {
  return `${Math.round(100 * x)}%`;
}

/** "10ms", "250us", "1.5s", "5000" (ns) → ns, for options such as --window. */
export function parseDuration(s: string): number {
  const m = /^\s*([0-9]*\.?[0-9]+)\s*(ns|us|µs|ms|s)?\s*$/.exec(s);
  if (!m) throw new Error(`not a duration: ${s} (e.g. 10ms, 250us, 1s)`);
  const k = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9 }[m[2] ?? 'ns'] ?? 1;
  return Math.round(Number(m[1]) * k);
}
