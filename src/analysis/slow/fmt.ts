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

/** bytes → "4.2 MB", "294.4 kB", "4 B" (decimal units) */
export function bytes(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} kB`;
  return `${n} B`;
}

/** share in [0, 1] → "42%" */
export function share(x: number): string {
  return `${Math.round(100 * x)}%`;
}

/** "10ms", "250us", "1.5s", "5000" (ns) → ns, for options such as --window. */
