// Compiling LuNA expressions (docs/language.md §4.2, §6.2) into closures evaluated by the system
// thread. Static types follow the original generator: literals and loop variables are typed,
// any DF reference is `dyn` (its int/real/string tag is known only at run time).
// A DF read that is not available yet marks the frame `missing` and yields a placeholder, so one
// evaluation pass discovers every DF a CF needs at this level; the CF re-evaluates once they came.
import type { BinOp, Expr, IdExpr } from '../lang/ast.js';
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
}

/** Static types: number for int/real, string for string, DfValue for dyn. */
export interface CExpr {
  type: StaticType;
  ev: (f: Frame) => unknown;
  /** Set when the expression is exactly a DF reference (forwardable as a whole value). */
  dfRef?: CDfRef;
}

/** A compiled DF reference: the key of `x[i][j]` and its owner node. */
export interface CDfRef {
  name: string;
  pos: number;
  key: (f: Frame) => string;
  /** the node a reader asks (for replicated DFs: the nearest replica) */
  owner: (f: Frame) => number;
  /** replicated DFs (`locator_replicating`): every node a producer posts a copy to */
  replicas?: (f: Frame) => number[];
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
}

export function compileExpr(e: Expr, sc: ExprScope): CExpr {
  switch (e.kind) {
    case 'int': { const v = e.value | 0; return { type: 'int', ev: () => v }; }
    case 'real': { const v = e.value; return { type: 'real', ev: () => v }; }
    case 'string': { const v = e.value; return { type: 'string', ev: () => v }; }
    case 'id': return compileId(e, sc);
    case 'neg': {
      const a = compileExpr(e.operand, sc);
      if (a.type === 'string') throw new EvalError('invalid operation on strings: -', e.pos);
      if (a.type === 'dyn') return { type: 'dyn', ev: (f) => negDyn(a.ev(f) as DfValue, e.pos) };
      const ev = a.ev;
      return a.type === 'int' ? { type: 'int', ev: (f) => (-(ev(f) as number)) | 0 } : { type: 'real', ev: (f) => -(ev(f) as number) };
    }
    case 'cast': {
      const a = compileExpr(e.expr, sc);
      if (e.to === 'string') return { type: 'string', ev: (f) => toStr(a, f) };
      const ev = a.ev;
      if (e.to === 'int') return { type: 'int', ev: (f) => truncInt(num(a.type, ev(f), e.pos)) };
      return { type: 'real', ev: (f) => num(a.type, ev(f), e.pos) };
    }
    case 'cond': {
      const c = compileExpr(e.cond, sc), t = compileExpr(e.then, sc), el = compileExpr(e.else, sc);
      const type: StaticType = t.type === el.type ? t.type : (t.type === 'string' || el.type === 'string') ? 'string'
        : (t.type === 'dyn' || el.type === 'dyn') ? 'dyn' : 'real';
      const tv = coerce(t, type), ev2 = coerce(el, type);
      return { type, ev: (f) => (truthy(c, f) ? tv(f) : ev2(f)) };
    }
    case 'bin': return compileBin(e.op, compileExpr(e.left, sc), compileExpr(e.right, sc), e.pos);
  }
}

function compileId(e: IdExpr, sc: ExprScope): CExpr {
  if (e.indices.length === 0) {
    const v = sc.value(e.name);
    if (v) { const s = v.slot; return { type: v.type, ev: (f) => f.env[s] }; }
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
      const key = ref.key(f);
      const owner = ref.owner(f);
      if (f.missing) return PLACEHOLDER;
      f.missing = was;
      const v = f.read(key, owner);
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
  const v = a.ev(f);
  switch (a.type) {
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
  const v = c.ev(f);
  if (c.type === 'dyn') { const d = v as DfValue; return d.t === T_STRING ? d.v !== '' : (d.v as number) !== 0; }
  if (c.type === 'string') return v !== '';
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

function compileBin(op: BinOp, l: CExpr, r: CExpr, pos: number): CExpr {
  if (op === '&&' || op === '||') {
    const isAnd = op === '&&';
    return { type: 'int', ev: (f) => (isAnd ? (truthy(l, f) && truthy(r, f)) : (truthy(l, f) || truthy(r, f))) ? 1 : 0 };
  }
  if (l.type === 'string' || r.type === 'string') {
    if (op !== '+' && op !== '==' && op !== '!=') throw new EvalError(`invalid operation on strings: ${op}`, pos);
    if (op === '+') return { type: 'string', ev: (f) => toStr(l, f) + toStr(r, f) };
    return { type: 'int', ev: (f) => cmpOp(op, toStr(l, f), toStr(r, f)) };
  }
  if (l.type === 'dyn' && r.type === 'dyn') {
    // DF ⊕ DF: the runtime DF operators; result keeps the dynamic type.
    return { type: 'dyn', ev: (f) => dynOp(op, l.ev(f) as DfValue, r.ev(f) as DfValue, pos) };
  }
  // Static result: int unless a real is involved (value ⊕ int is int, value ⊕ real is real).
  const type: 'int' | 'real' = l.type === 'real' || r.type === 'real' ? 'real' : 'int';
  const lt = l.type, rt = r.type, le = l.ev, re = r.ev;
  if (type === 'int') {
    return { type: 'int', ev: (f) => intOp(op, intOperand(lt, le(f), pos), intOperand(rt, re(f), pos), pos) };
  }
  return { type: CMP.has(op) ? 'int' : 'real', ev: (f) => realOp(op, num(lt, le(f), pos), num(rt, re(f), pos)) };
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
