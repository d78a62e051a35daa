// The physics of examples/collapse, shared by the ucodes and the sequential reference: dust
// particles falling from rest onto a point mass (a softened Kepler potential) through gas that
// drags them (stopping time TAU), so they settle at the centre and the cloud concentrates there
// as the run goes on; adaptive sub-steps. A particle's sub-step count follows its dynamical time, so near the centre, where
// the cloud concentrates, a particle costs up to MAX_SUB times more than far out (the time-step
// criterion of N-body and PIC codes, dt ∝ sqrt(r³/GM)). Particles do not interact, so a
// particle's path does not depend on the node it is pushed on: the run and the reference do the
// same floating-point operations on each particle.

/** float64s per particle: id, x, y, z, vx, vy, vz, sub-steps of the last step */
export const WORDS = 8;
export const ELSIZE = WORDS * 8;

/** GM of the central mass; its place (off the cloud's centre along x: one side falls in first) */
export const GM = 1;
export const CENTRE = [0.6, 0, 0] as const;
/** Plummer softening, step, accuracy of the sub-step criterion, most sub-steps a step */
export const EPS = 0.05;
export const DT = 0.04;
export const ETA = 0.025;
export const MAX_SUB = 64;
/** the drag's stopping time: a particle settles from r in about r³/(3·TAU·GM) */
export const TAU = 0.1;

/** A particle's start: uniform in the unit ball, at rest; a hash of its id (no shared random state). */
export function initial(id: number, out: Float64Array, at: number): void {
  let s = (id * 2654435761 + 0x9e3779b9) >>> 0;
  const rnd = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  let x, y, z;
  do { x = 2 * rnd() - 1; y = 2 * rnd() - 1; z = 2 * rnd() - 1; } while (x * x + y * y + z * z > 1);
  out[at] = id; out[at + 1] = x; out[at + 2] = y; out[at + 3] = z;
  out[at + 4] = 0; out[at + 5] = 0; out[at + 6] = 0; out[at + 7] = 0;
}

/** The particles of slab k of `slabs` along x (the ids 0..n-1 sorted by x, cut in equal parts), in id order. */
export function slab(n: number, slabs: number, k: number): Float64Array {
  const all = new Float64Array(n * WORDS);
  for (let id = 0; id < n; id++) initial(id, all, id * WORDS);
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => all[a * WORDS + 1]! - all[b * WORDS + 1]! || a - b);
  const from = Math.floor((k * n) / slabs), to = Math.floor(((k + 1) * n) / slabs);
  const ids = order.slice(from, to).sort((a, b) => a - b);
  const out = new Float64Array(ids.length * WORDS);
  ids.forEach((id, i) => out.set(all.subarray(id * WORDS, (id + 1) * WORDS), i * WORDS));
  return out;
}

/** One step of every particle in f[0 .. count·WORDS): kick-drift-kick, sub-stepped. Returns the sub-steps done. */
export function push(f: Float64Array, count: number): number {
  const [cx, cy, cz] = CENTRE;
  let work = 0;
  for (let i = 0; i < count; i++) {
    const o = i * WORDS;
    let x = f[o + 1]!, y = f[o + 2]!, z = f[o + 3]!, vx = f[o + 4]!, vy = f[o + 5]!, vz = f[o + 6]!;
    // the dynamical time where the particle starts the step decides its sub-steps
    let dx = x - cx, dy = y - cy, dz = z - cz;
    const r2 = dx * dx + dy * dy + dz * dz + EPS * EPS;
    const tdyn = Math.sqrt((r2 * Math.sqrt(r2)) / GM);
    const sub = Math.min(MAX_SUB, Math.max(1, Math.ceil(DT / (ETA * tdyn))));
    const h = DT / sub;
    // each half kick: gravity explicit, drag implicit (stable whatever h/TAU)
    const damp = 1 / (1 + (0.5 * h) / TAU);
    for (let k = 0; k < sub; k++) {
      let q = dx * dx + dy * dy + dz * dz + EPS * EPS;
      let a = (-GM / (q * Math.sqrt(q))) * 0.5 * h;
      vx = (vx + a * dx) * damp; vy = (vy + a * dy) * damp; vz = (vz + a * dz) * damp;
      x += h * vx; y += h * vy; z += h * vz;
      dx = x - cx; dy = y - cy; dz = z - cz;
      q = dx * dx + dy * dy + dz * dz + EPS * EPS;
      a = (-GM / (q * Math.sqrt(q))) * 0.5 * h;
      vx = (vx + a * dx) * damp; vy = (vy + a * dy) * damp; vz = (vz + a * dz) * damp;
    }
    f[o + 1] = x; f[o + 2] = y; f[o + 3] = z; f[o + 4] = vx; f[o + 5] = vy; f[o + 6] = vz; f[o + 7] = sub;
    work += sub;
  }
  return work;
}

/** The sequential reference: all n particles, `steps` steps, in id order. */
export function reference(n: number, steps: number): Float64Array {
  const f = new Float64Array(n * WORDS);
  for (let id = 0; id < n; id++) initial(id, f, id * WORDS);
  for (let s = 0; s < steps; s++) push(f, n);
  return f;
}
