// Durations in the model's damage reports (no dependency on the analyses' formatting).

/** ns as text with 4 significant digits and a unit. */
export function fmtT(ns: number): string {
  const a = Math.abs(ns);
  return a >= 1e9 ? `${(ns / 1e9).toPrecision(4)} s` : a >= 1e6 ? `${(ns / 1e6).toPrecision(4)} ms` : a >= 1e3 ? `${(ns / 1e3).toPrecision(4)} µs` : `${Math.round(ns)} ns`;
}
