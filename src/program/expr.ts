// Compiling LuNA expressions (docs/language.md §4.2, §6.2) into closures evaluated by the system
// thread. Static types follow the original generator: literals and loop variables are typed,
// any DF reference is `dyn` (its int/real/string tag is known only at run time).
// A DF read that is not available yet marks the frame `missing` and yields a placeholder, so one
// evaluation pass discovers every DF a CF needs at this level; the CF re-evaluates once they came.
import type { BinOp, Expr, IdExpr } from '../lang/ast.js';
import { binChain, condChain, negChain } from '../lang/walk.js';
import { T_INT, T_REAL, T_STRING, type DfValue } from '../ucode/value.js';

export type StaticType = 'int' | 'real' | 'string' | 'dyn';

/** Evaluation context of one CF: its environment and a DF reader. */
export interface Frame {
  env: unknown[];
  /** Read DF `key` owned by node `owner`; undefined = not here yet (the reader requested it). */
  read(key: string, owner: number): DfValue | undefined;
  missing: boolean;
  /** nodes in the run (locators take `mod size`) */
  size: number;
  /** this node's rank */
  self: number;
  /** the owner the last CDfRef.at found */
  located: number;
}

/** Static types: number for int/real, string for string, DfValue for dyn. */
export interface CExpr {
  type: StaticType;
  ev: (f: Frame) => unknown;
  /** Set when the expression is exactly a DF reference (forwardable as a whole value). */
  dfRef?: CDfRef;
  /** An int expression known at compile time: its value (literals and what folds from them). */
  k?: number;
  /** A plain int value read from the environment (a parameter, a loop variable): its slot. */
  slot?: number;
  /**
   * An int expression affine in int slots (`2*t - 1`, `i + n`): its form, exact. The closures
   * wrap to 32 bits at each step, which is arithmetic modulo 2^32: where the form's exact value
   * is an int32, the closure yields it (loop plans, node/loop-plan.ts, check that at their ends).
   */
  lin?: Lin;
  /** A plain real or string value read from the environment (a parameter): its slot. */
  plain?: number;
}

/** `k + Σ c·env[slot]`, exact (safe integers); no slot twice. */
export interface Lin {
  k: number;
  terms: readonly { slot: number; c: number }[];
}

/** `l + s·r` as a form, or undefined when a coefficient is no longer a safe integer. */
function linCombine(l: Lin, r: Lin, s: number): Lin | undefined {
  const terms = l.terms.map((t) => ({ slot: t.slot, c: t.c }));
  for (const t of r.terms) {
    const at = terms.find((x) => x.slot === t.slot);
    if (at) at.c += s * t.c; else terms.push({ slot: t.slot, c: s * t.c });
  }
  const k = l.k + s * r.k;
  const kept = terms.filter((t) => t.c !== 0);
  return Number.isSafeInteger(k) && kept.every((t) => Number.isSafeInteger(t.c)) ? { k, terms: kept } : undefined;
}

/** `m·l`, or undefined past safe integers. */
function linScale(l: Lin, m: number): Lin | undefined {
  const k = l.k * m;
  const terms = m === 0 ? [] : l.terms.map((t) => ({ slot: t.slot, c: t.c * m }));
  return Number.isSafeInteger(k) && terms.every((t) => Number.isSafeInteger(t.c)) ? { k, terms } : undefined;
}

/** The form of `l op r` over two int expressions, when it is affine (+, -, and * by a constant). */
function linOf(op: BinOp, l: CExpr, r: CExpr): Lin | undefined {
  const a = l.lin, b = r.lin;
  if (a === undefined || b === undefined) return undefined;
  if (op === '+') return linCombine(a, b, 1);
  if (op === '-') return linCombine(a, b, -1);
  if (op === '*') return b.terms.length === 0 ? linScale(a, b.k) : a.terms.length === 0 ? linScale(b, a.k) : undefined;
  return undefined;
}

/** A compiled DF reference: the key of `x[i][j]` and its owner node. */
export interface CDfRef {
  name: string;
  pos: number;
  key: (f: Frame) => string;
  /** the node a reader asks (for replicated DFs: the nearest replica) */
  owner: (f: Frame) => number;
  /**
   * The key, with the owner left in `f.located`: the indices evaluated once for both (the hot
   * path: a fragment's every input). Called with `f.missing` clear; a missing index sets it.
   */
  at: (f: Frame) => string;
  /** replicated DFs (`locator_replicating`): every node a producer posts a copy to */
  replicas?: (f: Frame) => number[];
  /** the frame slot of its base key and its compiled indices (loop plans read their `lin`) */
  form?: { slot: number; idx: readonly CExpr[] };
}

export class EvalError extends Error {
  constructor(message: string, readonly pos: number) { super(message); }
}

const PLACEHOLDER: DfValue = { t: T_INT, v: 0 };

/** Scope resolution used by the expression compiler (implemented by compile.ts). */
export interface ExprScope {
  /** a plain value (param, loop var, nfparam): slot and type */
  value(name: string): { slot: number; type: 'int' | 'real' | 'string' } | undefined;
  /** a DF reference `id` (base name declared as df or name param) */
  dfRef(id: IdExpr): CDfRef | undefined;
  /**
   * Whether `e` is fixed for a whole frame (only constants and names set once per frame, the
   * sub's parameters) and is worth keeping in a frame slot; `slot(e)` gives that slot, the same
   * for every expression of the sub written alike (a macro's copies share it).
   */
  memo?: { fixed(e: Expr): boolean; slot(e: Expr): number };
}

/**
 * Compile an expression. A chain of one level (`a + b - c …`, `(a ? b : c) ? d : e …`,
 * `- - x`) is compiled in a loop and evaluated in a loop, so its length costs no stack, neither
 * here nor at run time; other children recurse, as deep as the front end's nesting limit.
 */
export function compileExpr(e: Expr, sc: ExprScope): CExpr {
  if (sc.memo !== undefined && (e.kind === 'bin' || e.kind === 'cond' || e.kind === 'neg' || e.kind === 'cast') && sc.memo.fixed(e)) {
    const a = compileExpr(e, { value: sc.value, dfRef: sc.dfRef });
    if (a.k !== undefined || a.slot !== undefined) return a;
    const m = memoized(a, sc.memo.slot(e));
    if (a.lin !== undefined) m.lin = a.lin; // (the memo holds the same value)
    return m;
  }
  switch (e.kind) {
    case 'int': return intConst(e.value | 0);
    case 'real': { const v = e.value; return { type: 'real', ev: () => v }; }
    case 'string': { const v = e.value; return { type: 'string', ev: () => v }; }
    case 'id': return compileId(e, sc);
    case 'neg': {
      const { operand, count, innermost } = negChain(e);
      const pos = innermost.pos;
      const a = compileExpr(operand, sc);
      if (a.type === 'string') throw new EvalError('invalid operation on strings: -', pos);
      const ev = a.ev;
      if (a.type === 'dyn') {
        // an even count gives the value back, still checked to be a number like `-(-x)` is
        return count % 2 === 1
          ? { type: 'dyn', ev: (f) => negDyn(ev(f) as DfValue, pos) }
          : { type: 'dyn', ev: (f) => negDyn(negDyn(ev(f) as DfValue, pos), pos) };
      }
      // -(-x) is x for reals and for 32-bit ints (whose negation wraps)
      if (count % 2 === 0) return a.k !== undefined || a.slot !== undefined ? a : { type: a.type, ev };
      if (a.k !== undefined) return intConst(-a.k | 0);
      if (a.type !== 'int') return { type: 'real', ev: (f) => -(ev(f) as number) };
      const neg: CExpr = { type: 'int', ev: (f) => (-(ev(f) as number)) | 0 };
      const lin = a.lin === undefined ? undefined : linScale(a.lin, -1);
      if (lin !== undefined) neg.lin = lin;
      return neg;
    }
    case 'cast': {
      const a = compileExpr(e.expr, sc);
      if (e.to === 'string') return { type: 'string', ev: (f) => toStr(a, f) };
      const ev = a.ev;
      if (e.to === 'int') return { type: 'int', ev: (f) => truncInt(num(a.type, ev(f), e.pos)) };
      return { type: 'real', ev: (f) => num(a.type, ev(f), e.pos) };
    }
    case 'cond': {
      const { first, links } = condChain(e);
      const head = compileExpr(first, sc);
      let ctype = head.type;
      const steps: Step[] = [];
      for (const link of links) {
        const t = compileExpr(link.then, sc), el = compileExpr(link.else, sc);
        const type: StaticType = t.type === el.type ? t.type : (t.type === 'string' || el.type === 'string') ? 'string'
          : (t.type === 'dyn' || el.type === 'dyn') ? 'dyn' : 'real';
        const tv = coerce(t, type), ev2 = coerce(el, type), ct = ctype;
        steps.push((cv, f) => (truthyValue(ct, cv) ? tv(f) : ev2(f)));
        ctype = type;
      }
      return { type: ctype, ev: chain(head.ev, steps) };
    }
    case 'bin': {
      const { first, links } = binChain(e);
      const head = compileExpr(first, sc);
      // each operand is compiled once: the int fusion's tries are kept for the general chain
      // (compiling them again doubled the work at every level of a nested index)
      const rights: CExpr[] = [];
      const fused = fuseInt(head, links, sc, rights);
      if (fused) return fused;
      let type = head.type;
      const steps: Step[] = [];
      for (let i = 0; i < links.length; i++) {
        const link = links[i]!;
        const s = binStep(link.op, type, rights[i] ?? compileExpr(link.right, sc), link.pos);
        steps.push(s.step);
        type = s.type;
      }
      return { type, ev: chain(head.ev, steps) };
    }
  }
}

/**
 * An expression fixed for a frame, evaluated on its first use and kept in the frame's `slot`
 * (a sub's `(K + D - 1) / D` read by every index of every reference of its fragments). Frames
 * copied from it (loop iterations) keep it; a fault leaves nothing kept and faults again.
 */
function memoized(a: CExpr, slot: number): CExpr {
  const ev = a.ev;
  return {
    type: a.type,
    ev: (f) => {
      const v = f.env[slot];
      if (v !== undefined) return v;
      const w = ev(f);
      f.env[slot] = w;
      return w;
    },
  };
}

/** One link of a chain: the next value from the value so far. */
type Step = (v: unknown, f: Frame) => unknown;

/** Evaluate `head`, then apply the steps in order (a loop: no stack per link). */
function chain(head: (f: Frame) => unknown, steps: Step[]): (f: Frame) => unknown {
  switch (steps.length) {
    case 1: { const [a] = steps as [Step]; return (f) => a(head(f), f); }
    case 2: { const [a, b] = steps as [Step, Step]; return (f) => b(a(head(f), f), f); }
    default: return (f) => {
      let v = head(f);
      for (let i = 0; i < steps.length; i++) v = steps[i]!(v, f);
      return v;
    };
  }
}

function compileId(e: IdExpr, sc: ExprScope): CExpr {
  if (e.indices.length === 0) {
    const v = sc.value(e.name);
    if (v) {
      const s = v.slot;
      const ev = (f: Frame): unknown => f.env[s];
      return v.type === 'int' ? { type: 'int', ev, slot: s, lin: { k: 0, terms: [{ slot: s, c: 1 }] } } : { type: v.type, ev, plain: s };
    }
  }
  const ref = sc.dfRef(e);
  if (!ref) throw new EvalError(`undeclared name: ${e.name}`, e.pos);
  return {
    type: 'dyn',
    dfRef: ref,
    ev: (f) => {
      // An index that is itself a missing DF must not make us request a placeholder element.
      const was = f.missing;
      f.missing = false;
      const key = ref.at(f);
      if (f.missing) return PLACEHOLDER;
      f.missing = was;
      const v = f.read(key, f.located);
      if (v === undefined) { f.missing = true; return PLACEHOLDER; }
      return v;
    },
  };
}

/** Convert an evaluated value of static type `type` to the target type's closure. */
function coerce(a: CExpr, to: StaticType): (f: Frame) => unknown {
  if (a.type === to) return a.ev;
  const ev = a.ev;
  if (to === 'string') return (f) => toStr(a, f);
  if (to === 'dyn') return a.type === 'int' ? (f) => ({ t: T_INT, v: ev(f) }) : a.type === 'real' ? (f) => ({ t: T_REAL, v: ev(f) }) : (f) => ({ t: T_STRING, v: ev(f) });
  if (to === 'int') return (f) => truncInt(num(a.type, ev(f), 0));
  return (f) => num(a.type, ev(f), 0);
}

/** The number an int/real/dyn value stands for. */
export function num(type: StaticType, v: unknown, pos: number): number {
  if (type === 'dyn') {
    const d = v as DfValue;
    if (d.t === T_INT || d.t === T_REAL) return d.v as number;
    if (d.t === T_STRING) throw new EvalError(`a string DF used as a number`, pos);
    throw new EvalError(`a raw/JS DF used as a number`, pos);
  }
  if (type === 'string') throw new EvalError('a string used as a number', pos);
  return v as number;
}

function truncInt(x: number): number { return Math.trunc(x) | 0; }

/**
 * An operand of int arithmetic. `value ⊕ int` is typed int (docs/language.md §6.2): the original reads
 * the DF with the strict get_int, so a real DF there is an error, not a silent truncation.
 */
function intOperand(type: StaticType, v: unknown, pos: number): number {
  if (type === 'dyn' && (v as DfValue).t === T_REAL) {
    throw new EvalError(`a real DF (${(v as DfValue).v as number}) is used in int arithmetic; write real(...) or int(...) to say which`, pos);
  }
  return truncInt(num(type, v, pos));
}

/** C++ std::to_string for ints, %f for reals (what the original generator renders). */
export function toStr(a: CExpr, f: Frame): string {
  return strValue(a.type, a.ev(f));
}

/** toStr of an evaluated value of static type `type`. */
function strValue(type: StaticType, v: unknown): string {
  switch (type) {
    case 'string': return v as string;
    case 'int': return String(v);
    case 'real': return (v as number).toFixed(6);
    default: {
      const d = v as DfValue;
      return d.t === T_REAL ? (d.v as number).toFixed(6) : String(d.v);
    }
  }
}

export function truthy(c: CExpr, f: Frame): boolean {
  return truthyValue(c.type, c.ev(f));
}

function truthyValue(type: StaticType, v: unknown): boolean {
  if (type === 'dyn') { const d = v as DfValue; return d.t === T_STRING ? d.v !== '' : (d.v as number) !== 0; }
  if (type === 'string') return v !== '';
  return (v as number) !== 0;
}

function negDyn(d: DfValue, pos: number): DfValue {
  if (d.t === T_INT) return { t: T_INT, v: (-d.v) | 0 };
  if (d.t === T_REAL) return { t: T_REAL, v: -d.v };
  throw new EvalError('unary minus on a non-numeric DF', pos);
}

/** int ⊕ int in C: truncating division, remainder with the dividend's sign, 32-bit wrap. */
function intOp(op: BinOp, a: number, b: number, pos: number): number {
  switch (op) {
    case '+': return (a + b) | 0;
    case '-': return (a - b) | 0;
    case '*': return Math.imul(a, b);
    case '/': if (b === 0) throw new EvalError('integer division by zero', pos); return (a / b) | 0;
    case '%': if (b === 0) throw new EvalError('integer remainder by zero', pos); return (a % b) | 0;
    default: return cmpOp(op, a, b);
  }
}

function realOp(op: BinOp, a: number, b: number): number {
  switch (op) {
    case '+': return a + b;
    case '-': return a - b;
    case '*': return a * b;
    case '/': return a / b;
    case '%': return a % b;
    default: return cmpOp(op, a, b);
  }
}

function cmpOp(op: BinOp, a: number | string, b: number | string): number {
  switch (op) {
    case '<': return a < b ? 1 : 0;
    case '>': return a > b ? 1 : 0;
    case '<=': return a <= b ? 1 : 0;
    case '>=': return a >= b ? 1 : 0;
    case '==': return a === b ? 1 : 0;
    case '!=': return a !== b ? 1 : 0;
    default: return 0;
  }
}

const CMP = new Set<BinOp>(['<', '>', '<=', '>=', '==', '!=']);

/** `l op r` as a step from the value of `l` (static type `lt`), which is evaluated first. */
function binStep(op: BinOp, lt: StaticType, r: CExpr, pos: number): { type: StaticType; step: Step } {
  if (op === '&&' || op === '||') {
    const isAnd = op === '&&';
    return { type: 'int', step: (lv, f) => (isAnd ? (truthyValue(lt, lv) && truthy(r, f)) : (truthyValue(lt, lv) || truthy(r, f))) ? 1 : 0 };
  }
  if (lt === 'string' || r.type === 'string') {
    if (op !== '+' && op !== '==' && op !== '!=') throw new EvalError(`invalid operation on strings: ${op}`, pos);
    if (op === '+') return { type: 'string', step: (lv, f) => strValue(lt, lv) + toStr(r, f) };
    return { type: 'int', step: (lv, f) => cmpOp(op, strValue(lt, lv), toStr(r, f)) };
  }
  const rt = r.type, re = r.ev;
  if (lt === 'dyn' && rt === 'dyn') {
    // DF ⊕ DF: the runtime DF operators; result keeps the dynamic type.
    return { type: 'dyn', step: (lv, f) => dynOp(op, lv as DfValue, re(f) as DfValue, pos) };
  }
  // Static result: int unless a real is involved (value ⊕ int is int, value ⊕ real is real).
  if (lt !== 'real' && rt !== 'real') {
    const fn = intFn(op, pos);
    if (lt === 'int' && rt === 'int') return { type: 'int', step: (lv, f) => fn(lv as number, re(f) as number) };
    return { type: 'int', step: (lv, f) => fn(intOperand(lt, lv, pos), intOperand(rt, re(f), pos)) };
  }
  return { type: CMP.has(op) ? 'int' : 'real', step: (lv, f) => realOp(op, num(lt, lv, pos), num(rt, re(f), pos)) };
}

/** An int constant (its closure, and the value for folding and for callers that specialise on it). */
function intConst(v: number): CExpr {
  return { type: 'int', ev: () => v, k: v, lin: { k: v, terms: [] } };
}

/** `int ⊕ int` in C (see intOp), with the operator chosen once, at compile time. */
function intFn(op: BinOp, pos: number): (a: number, b: number) => number {
  switch (op) {
    case '+': return (a, b) => (a + b) | 0;
    case '-': return (a, b) => (a - b) | 0;
    case '*': return Math.imul;
    case '/': return (a, b) => { if (b === 0) throw new EvalError('integer division by zero', pos); return (a / b) | 0; };
    case '%': return (a, b) => { if (b === 0) throw new EvalError('integer remainder by zero', pos); return (a % b) | 0; };
    case '<': return (a, b) => (a < b ? 1 : 0);
    case '>': return (a, b) => (a > b ? 1 : 0);
    case '<=': return (a, b) => (a <= b ? 1 : 0);
    case '>=': return (a, b) => (a >= b ? 1 : 0);
    case '==': return (a, b) => (a === b ? 1 : 0);
    case '!=': return (a, b) => (a !== b ? 1 : 0);
    default: return (a, b) => intOp(op, a, b, pos);
  }
}

/**
 * Longest chain fused into nested closures. Index and locator expressions (`t - 1`, `i * n + j`)
 * are short; a longer chain keeps the loop of `chain`, whose length costs no stack.
 */
const FUSE_LINKS = 4;

/**
 * A short chain of int operators over int operands (`t - 1`, `i * n + j`, `(x + 1) % w`) as one
 * closure per operator with its operands read in place: a constant folds, a loop variable or
 * parameter is read from its slot, `+ - *` with a constant or a slot take no call for it. These
 * expressions name every DF a fragment reads (its indices) and place it (locator rules), so the
 * system thread evaluates several per input. Undefined when the chain does not qualify.
 */
function fuseInt(head: CExpr, links: { op: BinOp; right: Expr; pos: number }[], sc: ExprScope, rights: CExpr[]): CExpr | undefined {
  if (head.type !== 'int' || links.length > FUSE_LINKS) return undefined;
  let cur = head;
  for (const link of links) {
    if (link.op === '&&' || link.op === '||') return undefined;
    const r = compileExpr(link.right, sc);
    rights.push(r);
    if (r.type !== 'int') return undefined;
    cur = intBin(link.op, cur, r, link.pos);
  }
  return cur;
}

/** `l op r` over two int expressions: folded, or the closure that fits its operands' shapes. */
export function intBin(op: BinOp, l: CExpr, r: CExpr, pos: number): CExpr {
  const fn = intFn(op, pos);
  const lk = l.k, rk = r.k;
  if (lk !== undefined && rk !== undefined && !((op === '/' || op === '%') && rk === 0)) return intConst(fn(lk, rk));
  const le = l.ev as (f: Frame) => number, re = r.ev as (f: Frame) => number;
  const ls = l.slot, rs = r.slot;
  let ev: (f: Frame) => number;
  if (op === '+' || op === '-' || op === '*') {
    const add = op === '+', sub = op === '-';
    if (ls !== undefined && rk !== undefined) ev = add ? (f) => ((f.env[ls] as number) + rk) | 0 : sub ? (f) => ((f.env[ls] as number) - rk) | 0 : (f) => Math.imul(f.env[ls] as number, rk);
    else if (lk !== undefined && rs !== undefined) ev = add ? (f) => (lk + (f.env[rs] as number)) | 0 : sub ? (f) => (lk - (f.env[rs] as number)) | 0 : (f) => Math.imul(lk, f.env[rs] as number);
    else if (ls !== undefined && rs !== undefined) ev = add ? (f) => ((f.env[ls] as number) + (f.env[rs] as number)) | 0 : sub ? (f) => ((f.env[ls] as number) - (f.env[rs] as number)) | 0 : (f) => Math.imul(f.env[ls] as number, f.env[rs] as number);
    else if (rk !== undefined) ev = add ? (f) => (le(f) + rk) | 0 : sub ? (f) => (le(f) - rk) | 0 : (f) => Math.imul(le(f), rk);
    else if (rs !== undefined) ev = add ? (f) => (le(f) + (f.env[rs] as number)) | 0 : sub ? (f) => (le(f) - (f.env[rs] as number)) | 0 : (f) => Math.imul(le(f), f.env[rs] as number);
    else if (ls !== undefined) ev = add ? (f) => ((f.env[ls] as number) + re(f)) | 0 : sub ? (f) => ((f.env[ls] as number) - re(f)) | 0 : (f) => Math.imul(f.env[ls] as number, re(f));
    else ev = add ? (f) => (le(f) + re(f)) | 0 : sub ? (f) => (le(f) - re(f)) | 0 : (f) => Math.imul(le(f), re(f));
  } else if ((op === '/' || op === '%') && (rk !== undefined || rs !== undefined)) {
    // by a constant (never zero here: folded or checked) or a slot, checked in place: the wrapped
    // indices of a neighbour (`(a + F - 1) % F`) take one call, not three
    const rem = op === '%', msg = rem ? 'integer remainder by zero' : 'integer division by zero';
    if (rk !== undefined && rk !== 0) ev = rem ? (f) => (le(f) % rk) | 0 : (f) => (le(f) / rk) | 0;
    else if (rk !== undefined) ev = (f) => fn(le(f), rk);
    else {
      const s = rs!;
      ev = (f) => {
        const a = le(f), b = f.env[s] as number;
        if (b === 0) throw new EvalError(msg, pos);
        return rem ? (a % b) | 0 : (a / b) | 0;
      };
    }
  } else if (rk !== undefined) ev = (f) => fn(le(f), rk);
  else ev = (f) => fn(le(f), re(f));
  const out: CExpr = { type: 'int', ev };
  const lin = linOf(op, l, r);
  if (lin !== undefined) out.lin = lin;
  return out;
}

function dynOp(op: BinOp, a: DfValue, b: DfValue, pos: number): DfValue {
  if (a.t === T_STRING || b.t === T_STRING) {
    if (op === '+') return { t: T_STRING, v: String(a.v) + String(b.v) };
    if (op === '==' || op === '!=') return { t: T_INT, v: cmpOp(op, String(a.v), String(b.v)) };
    throw new EvalError(`invalid operation on string DFs: ${op}`, pos);
  }
  const x = num('dyn', a, pos), y = num('dyn', b, pos);
  if (a.t === T_INT && b.t === T_INT) return { t: T_INT, v: intOp(op, x, y, pos) };
  const v = realOp(op, x, y);
  return CMP.has(op) ? { t: T_INT, v } : { t: T_REAL, v };
}

/** Evaluate to a plain JS value for a ucode/sub parameter of kind int/real/string. */
export function argValue(a: CExpr, kind: 'int' | 'real' | 'string', f: Frame, pos: number): number | string {
  if (kind === 'string') return toStr(a, f);
  const x = num(a.type, a.ev(f), pos);
  return kind === 'int' ? truncInt(x) : x;
}

/** Evaluate to a DfValue (for `value` params given an expression over DFs). */
export function dfValueOf(a: CExpr, f: Frame): DfValue {
  const v = a.ev(f);
  switch (a.type) {
    case 'dyn': return v as DfValue;
    case 'int': return { t: T_INT, v: v as number };
    case 'real': return { t: T_REAL, v: v as number };
    default: return { t: T_STRING, v: v as string };
  }
}
