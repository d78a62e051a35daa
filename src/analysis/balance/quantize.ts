// Time quantization (seed 004 §2.2.2–2.2.4): the run cut into quanta x_i = [q·i, q·(i+1)),
// N_q = ceil(t_last / q) (formulas 1, 2); a CF's quantized weight in quantum i is the length of
// x_i ∩ [t_b, t_e] (3); a node's quantized load W_n,i is the sum over its CFs (4); the mean
// load W_avg,i = Σ_n W_n,i / |N| (5). Weights are kept by quantum (CSR), the loads quantum-major.

/** Execution intervals of CFs: [start, finish] in ns from the start of the run. */
export interface Intervals {
  readonly n: number;
  readonly start: ArrayLike<number>;
  readonly finish: ArrayLike<number>;
}

export interface Quanta {
  /** quantum length, ns */
  q: number;
  /** N_q */
  count: number;
  /** the CFs with a weight in quantum i: cf[at[i] .. at[i+1]), their weights w[…] */
  at: Int32Array;
  cf: Int32Array;
  w: Float64Array;
}

/** t_last: the last event of a CF (its latest finish). */
export function lastEvent(iv: Intervals): number {
  let t = 0;
  for (let k = 0; k < iv.n; k++) if (iv.finish[k]! > t) t = iv.finish[k]!;
  return t;
}

/** Quantum indices a CF covers: [first, last] (last < first when its interval is empty). */
export function span(s: number, f: number, q: number, count: number): [number, number] {
  const a = Math.min(count - 1, Math.max(0, Math.floor(s / q)));
  // an interval ending exactly on a boundary has no weight in the quantum that starts there
  const b = Math.min(count - 1, Math.ceil(f / q) - 1);
  return [a, f > s ? b : a - 1];
}

/** w_cf,i = |x_i ∩ [s, f]| (formula 3). */
export function weight(s: number, f: number, q: number, i: number): number {
  return Math.max(0, Math.min(f, q * (i + 1)) - Math.max(s, q * i));
}

/** The quantized weights of every CF (formulas 1–3). */
export function quantize(iv: Intervals, q: number, tLast = lastEvent(iv)): Quanta {
  if (!(q > 0)) throw new RangeError(`the quantum must be positive, got ${q}`);
  const count = Math.max(1, Math.ceil(tLast / q));
  const at = new Int32Array(count + 1);
  for (let k = 0; k < iv.n; k++) {
    const [a, b] = span(iv.start[k]!, iv.finish[k]!, q, count);
    for (let i = a; i <= b; i++) at[i + 1]++;
  }
  for (let i = 0; i < count; i++) at[i + 1] += at[i]!;
  const fill = at.slice(0, count);
  const cf = new Int32Array(at[count]!), w = new Float64Array(at[count]!);
  for (let k = 0; k < iv.n; k++) {
    const s = iv.start[k]!, f = iv.finish[k]!;
    const [a, b] = span(s, f, q, count);
    for (let i = a; i <= b; i++) { const x = fill[i]!++; cf[x] = k; w[x] = weight(s, f, q, i); }
  }
  return { q, count, at, cf, w };
}

/** W_n,i (formula 4) for the placement `node`, quantum-major: load[i·nodes + n]. */
export function loads(qt: Quanta, node: ArrayLike<number>, nodes: number): Float64Array {
  const W = new Float64Array(qt.count * nodes);
  for (let i = 0; i < qt.count; i++) {
    for (let x = qt.at[i]!; x < qt.at[i + 1]!; x++) W[i * nodes + node[qt.cf[x]!]!] += qt.w[x]!;
  }
  return W;
}

/** W_avg,i (formula 5). */
export function meanLoads(W: Float64Array, nodes: number): Float64Array {
  const count = W.length / nodes;
  const avg = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    let s = 0;
    for (let n = 0; n < nodes; n++) s += W[i * nodes + n]!;
    avg[i] = s / nodes;
  }
  return avg;
}
