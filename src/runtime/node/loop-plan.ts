// Loop plans: a `for` whose body is only calls of imported ucodes, every DF index affine in the
// loop variable, is planned once as a whole — which input of which iteration is the output of
// which earlier iteration (a constant distance), and which outputs never leave the loop — so
// that its steps can go to the lanes as tasks with forwarded inputs, without a fragment, a store
// entry or a feed candidate per step (node/loop-run.ts). Anything the plan cannot prove is
// refused, and the loop is unrolled as before. Decided from the compiled expressions' affine
// forms (program/expr.ts Lin), never by sampling closures.
import type { CallSite, ForSite } from '../../program/compile.js';
import type { CDfRef, CExpr, Frame, Lin } from '../../program/expr.js';
import type { DfValue } from '../../ucode/value.js';
import { familyOf } from './freed.js';
import type { KeptForm, KeptKeys } from './store.js';

/** A DF reference of the body at iteration t: base key, index j = a[j]·t + b[j]. */
export interface PlanRef {
  readonly ref: CDfRef;
  readonly base: string;
  readonly a: readonly number[];
  readonly b: readonly number[];
}

/** An input of a body site: from output `out` of site `site` of iteration t − d; from the store when t − d is before the loop. */
export interface PlanInput {
  readonly arg: number;
  readonly ref: PlanRef;
  readonly from: { readonly site: number; readonly out: number; readonly d: number };
}

export interface PlanSite {
  readonly site: CallSite;
  readonly inputs: readonly PlanInput[];
  /** per output (in order of the name arguments): its reference and argument */
  readonly outs: readonly { readonly arg: number; readonly ref: PlanRef }[];
  /** per output its req_count (-1: unlimited) */
  readonly rules: readonly number[];
  /** per output, the inputs of the body that read it: site, input and distance */
  readonly readers: readonly (readonly { readonly site: number; readonly input: number; readonly d: number }[])[];
  /** the lane its steps run on, for the whole loop */
  readonly lane: number;
}

export interface LoopPlan {
  readonly first: number;
  readonly last: number;
  readonly sites: readonly PlanSite[];
  /** the largest distance of an internal input (0: the iterations are independent) */
  readonly depth: number;
  /**
   * independent iterations spread over this many lanes (0: each site on its lane): a window is
   * cut in blocks of iterations, one a lane, each iteration's steps on its block's lane
   */
  readonly spread?: number;
}

/** `n` as an int32 (the closures' arithmetic), or NaN. */
function int32(n: unknown): number {
  return typeof n === 'number' && Number.isInteger(n) && (n | 0) === n ? n : NaN;
}

/** Form `lin` with every slot but `varSlot` read from `env`: [coefficient of the variable, the rest], or null. */
export function split(lin: Lin | undefined, env: readonly unknown[], varSlot: number): [number, number] | null {
  if (lin === undefined) return null;
  let a = 0, b = lin.k;
  for (const t of lin.terms) {
    if (t.slot === varSlot) { a += t.c; continue; }
    const v = int32(env[t.slot]);
    if (Number.isNaN(v)) return null;
    b += t.c * v;
  }
  return Number.isSafeInteger(a) && Number.isSafeInteger(b) ? [a, b] : null;
}

/** Whether a·t + b is an int32 at both ends of [first, last] (so everywhere between: it is affine). */
function fitsInt32(a: number, b: number, first: number, last: number): boolean {
  const lo = a * first + b, hi = a * last + b;
  return Math.abs(lo) < 2 ** 31 && Math.abs(hi) < 2 ** 31 && lo >= -(2 ** 31) && hi >= -(2 ** 31);
}

/** The reference as a PlanRef, or the reason it is not one. */
function planRef(ref: CDfRef, env: readonly unknown[], varSlot: number, first: number, last: number): PlanRef | string {
  const form = ref.form;
  if (form === undefined || ref.replicas) return `${ref.name}: not a plain reference`;
  const base = env[form.slot];
  if (typeof base !== 'string') return `${ref.name}: its base is not known`;
  const a: number[] = [], b: number[] = [];
  for (const e of form.idx) {
    const ab = split(e.lin, env, varSlot);
    if (ab === null || !fitsInt32(ab[0], ab[1], first, last)) return `${ref.name}: an index is not affine in the loop variable`;
    a.push(ab[0]);
    b.push(ab[1]);
  }
  return { ref, base, a, b };
}

/**
 * The distance d ≥ 0 such that `input` at iteration t reads what `output` writes at iteration
 * t − d, for every t; null when they never meet; undefined when they may meet other than so
 * (the plan refuses: it cannot tell which iteration a read needs).
 */
export function distance(input: PlanRef, output: PlanRef): number | null | undefined {
  if (input.base !== output.base || input.a.length !== output.a.length) return null;
  let d: number | null = null;
  for (let j = 0; j < input.a.length; j++) {
    const ai = input.a[j]!, ao = output.a[j]!, bi = input.b[j]!, bo = output.b[j]!;
    if (ai !== ao) {
      // different slopes in one index: they may meet at some pairs of iterations, none of them a constant distance
      return undefined;
    }
    if (ai === 0) { if (bi !== bo) return null; continue; }
    // ai·t + bi = ai·(t − d) + bo  ⇔  d = (bo − bi) / ai
    const q = (bo - bi) / ai;
    if (!Number.isInteger(q)) return null;
    if (d !== null && d !== q) return null;
    d = q;
  }
  // every index constant (or equal slopes with no constraint): the same DF at every iteration
  return d === null ? undefined : d;
}

/**
 * Plan loop `site` over [first, last] in the environment `env` of its CF, for `lanes` worker
 * lanes, its sites on lanes `lane0`, `lane0` + 1, … (mod lanes: independent loops, as a sub's
 * chains, take turns); the reason when it does not qualify.
 */
export function planLoop(site: ForSite, env: readonly unknown[], first: number, last: number, lanes: number, lane0 = 0): LoopPlan | string {
  if (lanes < 2) return 'fewer than 2 worker lanes';
  if (last < first) return 'no iterations';
  if (site.body.dfs.length > 0) return 'the body declares DFs';
  const varSlot = site.varSlot;
  const sites: { site: CallSite; inputs: { arg: number; ref: PlanRef }[]; outs: { arg: number; ref: PlanRef }[]; rules: number[] }[] = [];
  for (const s of site.body.stmts) {
    if (s.kind !== 'call') return `${s.label}: not a call of a ucode`;
    if (!s.rulesConstant && (s.reqCount.length > 0 || s.drop.length > 0 || s.afterpush.length > 0)) return `${s.label}: its output rules are not constant`;
    if (s.waits.length > 0 || s.afterpush.length > 0 || s.drop.length > 0 || s.unlimited.length > 0) return `${s.label}: waits, drops or pushes`;
    if (s.setdfs.length > 0 || s.deletes.length > 0 || s.requests.length > 0) return `${s.label}: has after-actions or requests`;
    if (s.imp.waits || s.priority !== undefined || s.stealable || s.labelReadsDf) return `${s.label}: may wait, is ordered or stealable`;
    if (!s.labelIdx.every((e) => split(e.lin, env, varSlot) !== null)) return `${s.label}: a label index is not affine`;
    const inputs: { arg: number; ref: PlanRef }[] = [], outs: { arg: number; ref: PlanRef }[] = [];
    for (let i = 0; i < s.args.length; i++) {
      const a = s.args[i]!;
      if (a.kind === 'val') {
        // an int affine in the variable, or a real or string parameter passed as it is
        const ok = a.type === 'int' ? split(a.expr.lin, env, varSlot) !== null : a.expr.plain !== undefined && a.expr.plain !== varSlot && a.expr.type === a.type;
        if (!ok) return `${s.label}: argument ${i + 1} is not an affine int or a parameter`;
        continue;
      }
      const ref = a.kind === 'in' ? a.expr.dfRef : a.ref;
      if (!ref) return `${s.label}: argument ${i + 1} is a value expression`;
      const r = planRef(ref, env, varSlot, first, last);
      if (typeof r === 'string') return `${s.label}: ${r}`;
      (a.kind === 'in' ? inputs : outs).push({ arg: i, ref: r });
    }
    const rules = outs.map(() => -1);
    for (const rc of s.reqCount) rules[rc.out] = rc.expr.k!;
    sites.push({ site: s, inputs, outs, rules });
  }
  // outputs: distinct per iteration and across sites (a second post is the program's fault, reported on the usual path)
  for (let s = 0; s < sites.length; s++) {
    for (let o = 0; o < sites[s]!.outs.length; o++) {
      const out = sites[s]!.outs[o]!.ref;
      if (last > first && out.a.every((x) => x === 0)) return `${sites[s]!.site.label}: writes the same DF at every iteration`;
      for (let s2 = 0; s2 <= s; s2++) {
        for (let o2 = 0; o2 < (s2 === s ? o : sites[s2]!.outs.length); o2++) {
          if (distance(out, sites[s2]!.outs[o2]!.ref) !== null) return `${sites[s]!.site.label}: two outputs may be the same DF`;
        }
      }
    }
  }
  // inputs: each from one output at a constant distance, or from outside the loop
  const readers = sites.map((x) => x.outs.map(() => [] as { site: number; input: number; d: number }[]));
  const planned: PlanSite[] = [];
  let depth = 0;
  for (let s = 0; s < sites.length; s++) {
    const inputs: PlanInput[] = [];
    for (let i = 0; i < sites[s]!.inputs.length; i++) {
      const inp = sites[s]!.inputs[i]!;
      let from: PlanInput['from'] | null = null;
      for (let s2 = 0; s2 < sites.length; s2++) {
        for (let o = 0; o < sites[s2]!.outs.length; o++) {
          const d = distance(inp.ref, sites[s2]!.outs[o]!.ref);
          if (d === null) continue;
          if (d === undefined) return `${sites[s]!.site.label}: an input may be an output of the loop at no fixed distance`;
          // a later iteration's, or a later statement's of the same iteration: not in the order the tasks go
          if (d < 0 || (d === 0 && s2 >= s)) return `${sites[s]!.site.label}: reads an output of a later step`;
          if (d > last - first) continue; // never inside the loop: from outside
          from = { site: s2, out: o, d };
          readers[s2]![o]!.push({ site: s, input: i, d });
          if (d > depth) depth = d;
        }
      }
      // read from outside at every step: the steps would wait for values made anywhere, maybe by
      // what waits for the loop's own outputs; only the first steps of a distance read outside
      if (from === null) return `${sites[s]!.site.label}: an input is read from outside the loop at every step`;
      inputs.push({ arg: inp.arg, ref: inp.ref, from });
    }
    planned.push({ site: sites[s]!.site, inputs, outs: sites[s]!.outs, rules: sites[s]!.rules, readers: readers[s]!, lane: (lane0 + s) % lanes });
  }
  // an output read inside the loop more often than its req_count allows: the usual path reports it
  for (const p of planned) {
    for (let o = 0; o < p.outs.length; o++) if (p.rules[o]! >= 0 && p.readers[o]!.length > p.rules[o]!) return `${p.site.label}: an output is read more often than its req_count`;
  }
  return { first, last, sites: planned, depth };
}

/** How many inputs of the loop read output `o` of site `s` of iteration `u`. */
export function internalReads(plan: LoopPlan, s: number, o: number, u: number): number {
  let n = 0;
  for (const r of plan.sites[s]!.readers[o]!) if (u + r.d <= plan.last) n++;
  return n;
}

/**
 * What output `o` of site `s` of iteration `u` leaves to the store: -2 nothing (its readers are
 * all inside the loop), else the count it is posted with (-1: unlimited).
 */
export function escapes(plan: LoopPlan, s: number, o: number, u: number): number {
  const rule = plan.sites[s]!.rules[o]!;
  if (rule < 0) return -1;
  const left = rule - internalReads(plan, s, o, u);
  return left === 0 ? -2 : left;
}

/** The value of an affine int expression at iteration `t` (the plan checked that it has a form). */
export function affineAt(e: CExpr, env: readonly unknown[], varSlot: number, t: number): number {
  const ab = split(e.lin, env, varSlot)!;
  return (ab[0] * t + ab[1]) | 0;
}

/** A frame for the body's keys (and its labels' indices, loop-trace.ts): indices are affine in the loop variable and read no DF. */
export class KeyFrame implements Frame {
  missing = false;
  located = 0;
  constructor(public env: unknown[], readonly size: number, readonly self: number) {}
  read(): DfValue | undefined {
    throw new Error('internal: a planned loop read a DF through an index');
  }
}

/**
 * Entries of the store read at least, whatever a turn (loop-inline.ts) or a batch's booking
 * (loop-run.ts) keeps, before a loop's kept outputs are recorded by numbers (DfStore.watchKept).
 * Reading an entry's key cost 34–61 ns (DfStore.watchKept reading 64 to 16 384 entries of
 * another family, optimised; docs/benchmarks.md); a kept output recorded by numbers saved ~1.1 µs
 * a step (the 20 000-step stencil, calls 4 000–40 000: 6.54 → 5.42 µs). So the store's entries
 * are read up to as many as the outputs kept (a turn: its largest turn so far; the first turn the
 * loop's remaining), only when entries were made since, and at least 64 (2.2 µs, 0.06 % of the
 * pump's 4 ms turn: a tiny first turn would otherwise leave the next one key by key).
 */
export const KEPT_SCAN_FLOOR = 64;

/**
 * The plan's outputs its own readers use up (each read only inside the loop, by as many reads as
 * its req_count) as the store records them spent by numbers (DfStore.spentIn): per site and
 * output its form, null where it is never kept or its keys are not one family's rows (an index
 * before the last two moves with the loop variable); and all of them, as the store watches them.
 */
export function keptForms(plan: LoopPlan): { forms: (KeptForm | null)[][]; kept: KeptKeys | null; per: number } {
  const forms = plan.sites.map((ps) => ps.outs.map((o, k) => {
    // kept at the iterations whose readers are all inside: only when the count is theirs
    const rule = ps.rules[k]!, rs = ps.readers[k]!;
    return rule >= 0 && rule === rs.length ? keptForm(o.ref, rs.reduce((m, r) => Math.max(m, r.d), 0)) : null;
  }));
  const all = forms.flat().filter((x): x is KeptForm => x !== null);
  return { forms, kept: all.length > 0 ? { forms: all, from: 0, last: 0, hit: false, made: -1 } : null, per: all.length };
}

/** Output reference `r`'s keys as FreedKeys keeps them (family, row and last index affine in the loop variable), its readers up to `d` later. */
function keptForm(r: PlanRef, d: number): KeptForm | null {
  const m = r.a.length;
  if (m === 0) return null;
  if (m === 1) {
    const family = familyOf(r.base, [], 1);
    return { family, ar: 0, br: family.row, ac: r.a[0]!, bc: r.b[0]!, d };
  }
  for (let j = 0; j < m - 2; j++) if (r.a[j] !== 0) return null;
  return { family: familyOf(r.base, r.b.slice(0, m - 2), m), ar: r.a[m - 2]!, br: r.b[m - 2]!, ac: r.a[m - 1]!, bc: r.b[m - 1]!, d };
}
