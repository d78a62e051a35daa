// The one parser of durations on the command line and in files.

const UNITS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9 };

export class DurationError extends Error {}

/**
 * "10ms", "250us", "1.5s", "2000ns" → nanoseconds (an integer). A bare number is refused: it
 * would silently mean nanoseconds to one reader and milliseconds to another.
 */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-zµ]*)\s*$/.exec(text);
  if (!m) throw new DurationError(`not a duration: ${JSON.stringify(text)} (write e.g. 10ms, 250us, 1.5s)`);
  if (m[2] === '') throw new DurationError(`${JSON.stringify(text)} needs a unit: ns, us, ms or s (e.g. ${m[1]}us or ${m[1]}ms)`);
  const k = UNITS[m[2]!];
  if (k === undefined) throw new DurationError(`unknown unit ${JSON.stringify(m[2])} in ${JSON.stringify(text)} (units: ns, us, ms, s)`);
  const ns = Math.round(Number(m[1]) * k);
  if (!(ns > 0)) throw new DurationError(`a duration must be positive, got ${JSON.stringify(text)}`);
  return ns;
}

/** 1234567 → "1.23 ms": a duration for people. */
export function formatDuration(ns: number): string {
  const a = Math.abs(ns);
  if (a >= 1e9) return `${(ns / 1e9).toFixed(a >= 1e10 ? 1 : 2)} s`;
  if (a >= 1e6) return `${(ns / 1e6).toFixed(a >= 1e7 ? 1 : 2)} ms`;
  if (a >= 1e3) return `${(ns / 1e3).toFixed(a >= 1e4 ? 1 : 2)} µs`;
  return `${Math.round(ns)} ns`;
}
