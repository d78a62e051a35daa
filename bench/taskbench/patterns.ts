// Task Bench dependence patterns (Slaughter et al., SC'20): at each timestep t a set of points
// is active, and point x of step t reads some points of step t - 1. The definitions follow the
// reference implementation's TaskGraph (widths, offsets, dependence sets and their period, the
// radix of nearest/spread/random_nearest); random_nearest draws its edges from a deterministic
// hash of its own (the same kind of graph, not the reference's draws).

export type Pattern =
  | 'trivial' | 'no_comm' | 'stencil_1d' | 'stencil_1d_periodic' | 'dom' | 'tree' | 'fft'
  | 'all_to_all' | 'nearest' | 'spread' | 'random_nearest';

export const PATTERNS: readonly Pattern[] = [
  'trivial', 'no_comm', 'stencil_1d', 'stencil_1d_periodic', 'dom', 'tree', 'fft',
  'all_to_all', 'nearest', 'spread', 'random_nearest',
];

export interface Graph {
  pattern: Pattern;
  width: number;
  steps: number;
  /** neighbours of nearest, spread, random_nearest */
  radix: number;
  /** dependence sets of spread and random_nearest repeat with this period */
  period: number;
  /** random_nearest: probability of each edge */
  fraction: number;
}

export function graph(pattern: Pattern, width: number, steps: number, radix = 3): Graph {
  return { pattern, width, steps, radix, period: 3, fraction: 0.25 };
}

/** First active point of step t. */
export function offset(g: Graph, t: number): number {
  return g.pattern === 'dom' ? Math.max(0, t + g.width - g.steps) : 0;
}

/** Number of active points of step t. */
export function widthAt(g: Graph, t: number): number {
  switch (g.pattern) {
    case 'dom': return Math.min(g.width, Math.min(t + 1, g.steps - t));
    case 'tree': return Math.min(g.width, 2 ** Math.min(t, 30));
    default: return g.width;
  }
}

function sets(g: Graph): number {
  if (g.pattern === 'fft') return Math.max(1, Math.ceil(Math.log2(g.width)));
  if (g.pattern === 'spread' || g.pattern === 'random_nearest') return g.period;
  return 1;
}

function dset(g: Graph, t: number): number {
  const n = sets(g);
  if (g.pattern === 'fft') return (t + n - 1) % n;
  return t % n;
}

function uniform(a: number, b: number, c: number, d: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 15), 0x27d4eb2f) ^ Math.imul(c + 17, 0x165667b1) ^ Math.imul(d + 31, 0xd3a2646c);
  h = Math.imul(h ^ (h >>> 13), 0x85ebca6b);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

/** The points of step t - 1 that point x of step t reads (sorted, distinct, active). */
export function deps(g: Graph, t: number, x: number): number[] {
  const W = g.width, r = g.radix, ds = dset(g, t);
  const out: number[] = [];
  const range = (lo: number, hi: number) => { for (let d = lo; d <= hi; d++) out.push(d); };
  switch (g.pattern) {
    case 'trivial': break;
    case 'no_comm': out.push(x); break;
    case 'stencil_1d': range(Math.max(0, x - 1), Math.min(x + 1, W - 1)); break;
    case 'stencil_1d_periodic':
      range(Math.max(0, x - 1), Math.min(x + 1, W - 1));
      if (x - 1 < 0) out.push(W - 1);
      if (x + 1 >= W) out.push(0);
      break;
    case 'dom': range(Math.max(0, x - 1), x); break;
    case 'tree': out.push(Math.floor(x / 2)); break;
    case 'fft': {
      const d1 = x - 2 ** ds, d2 = x + 2 ** ds;
      if (d1 >= 0) out.push(d1);
      out.push(x);
      if (d2 < W) out.push(d2);
      break;
    }
    case 'all_to_all': range(0, W - 1); break;
    case 'nearest': if (r > 0) range(Math.max(0, x - Math.floor(r / 2)), Math.min(x + Math.floor((r - 1) / 2), W - 1)); break;
    case 'spread': for (let i = 0; i < r; i++) out.push((x + Math.floor((i * W) / r) + (i > 0 ? ds : 0)) % W); break;
    case 'random_nearest':
      for (let i = Math.max(0, x - Math.floor(r / 2)); i <= Math.min(x + Math.floor((r - 1) / 2), W - 1); i++) {
        if (uniform(r, ds, i, x) < g.fraction || (r > 0 && i === x)) out.push(i);
      }
      break;
  }
  // only what exists at t - 1
  const lo = offset(g, t - 1), hi = lo + widthAt(g, t - 1) - 1;
  return [...new Set(out)].filter((d) => d >= lo && d <= hi).sort((a, b) => a - b);
}

/** Whether the same statements serve every step t ≥ 1 (then a loop generates them). */
export function uniformSteps(g: Graph): boolean {
  return (g.pattern === 'trivial' || g.pattern === 'no_comm' || g.pattern === 'stencil_1d' || g.pattern === 'stencil_1d_periodic' ||
    g.pattern === 'all_to_all' || g.pattern === 'nearest' || (g.pattern === 'fft' && sets(g) === 1));
}
