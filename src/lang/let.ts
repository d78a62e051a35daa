// `let` elimination (docs/language.md §4.3.12), done before any checking, as the original's
// substitution_let.py does — but covering every rule (the original only touched the first one)
// and giving the form whose body declares dfs its intended meaning (see rewriteWithDfs).
//
// Bounds: a substituted value deepens the expression it lands in, and values used in values
// multiply sizes (`let a = x+x, b = a+a, …`). Values are shared, not copied, but later stages
// walk the result as a tree; so a use that would nest deeper than MAX_NESTING, or substitute
// more than `maxSubstitutedNodes` nodes in all, is an error (LUNA-E025) instead.
import type {
  Block, CfStmt, Expr, ForStmt, IdExpr, IfStmt, LetBinding, LetStmt, Pragma, Program, Rule, Stmt, TopLevel,
} from './ast.js';
import type { Diagnostic } from './diagnostics.js';
import { MAX_NESTING } from './parser.js';
import type { Origin } from './source.js';
import { binChain, condChain, negChain } from './walk.js';

/** Positioned diagnostic before the origin is known; check/index resolve `pos` to an Origin. */
export interface PosDiagnostic extends Diagnostic {
  pos: number;
}

/** Default bound on the expression nodes all let substitutions of a program may add. */
export const MAX_SUBSTITUTED_NODES = 1 << 22;

/** What a name means at some point: a let value, a plain int (loop/while var, int param), other. */
type Meaning =
  | { kind: 'let'; value: Expr; binding: LetBinding; depth: number; size: number }
  | { kind: 'int' }
  | { kind: 'other' };

/** Names in effect, one layer per construct (so lookups cost the nesting depth, never more). */
class Env {
  readonly names = new Map<string, Meaning>();
  constructor(readonly parent: Env | null) {}

  lookup(name: string): Meaning | undefined {
    for (let e: Env | null = this; e; e = e.parent) {
      const m = e.names.get(name);
      if (m) return m;
    }
    return undefined;
  }

  letOf(name: string): Extract<Meaning, { kind: 'let' }> | undefined {
    const m = this.lookup(name);
    return m?.kind === 'let' ? m : undefined;
  }

  isInt(name: string): boolean {
    return this.lookup(name)?.kind === 'int';
  }
}

/**
 * Removes every `let` from the program. Diagnostics carry `pos`; they also get an `origin`
 * when `originOf` is given.
 */
export function substituteLet(
  program: Program,
  originOf?: (pos: number) => Origin,
  opts: { maxSubstitutedNodes?: number } = {},
): { program: Program; diagnostics: PosDiagnostic[] } {
  const diagnostics: PosDiagnostic[] = [];
  const pass = new LetPass(diagnostics, opts.maxSubstitutedNodes ?? MAX_SUBSTITUTED_NODES);
  const items = program.items.map((item): TopLevel => {
    if (item.kind !== 'sub') return item;
    const env = new Env(null);
    for (const p of item.params) if (p.type === 'int') env.names.set(p.name, { kind: 'int' });
    const body = pass.block(item.body, env, 1);
    return body === item.body ? item : { ...item, body };
  });
  if (originOf) for (const d of diagnostics) d.origin = originOf(d.pos);
  return { program: { ...program, items }, diagnostics };
}

const sameArray = <T>(a: readonly T[], b: readonly T[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
const INT_ONLY: Meaning = { kind: 'int' };
const OTHER: Meaning = { kind: 'other' };

class LetPass {
  /** bindings substituted at least once (for the unused-binding warning) */
  private readonly used = new Set<LetBinding>();
  /** statement depth of the block being rewritten (the parser's nesting level) */
  private bd = 1;
  /** deepest position and number of nodes of the expression being rewritten */
  private maxD = 0;
  private size = 0;
  private budget: number;
  /** uses in statements and rules are charged to the budget; uses inside binding values are not
   * (values are shared, only what reaches a statement is walked as a tree later) */
  private charging = true;

  constructor(private readonly diags: PosDiagnostic[], maxNodes: number) {
    this.budget = maxNodes;
  }

  private error(code: string, message: string, pos: number): void {
    this.diags.push({ severity: 'error', code, message, pos });
  }

  /** A layer where `names` (declared by a construct) hide outer let bindings of the same name. */
  private shadow(env: Env, names: string[], asInt: boolean): Env {
    if (!asInt && !names.some((n) => env.lookup(n)?.kind === 'let' || env.isInt(n))) return env;
    const inner = new Env(env);
    for (const n of names) inner.names.set(n, asInt ? INT_ONLY : OTHER);
    return inner;
  }

  /** A block whose statements are at nesting level `depth`. */
  block(b: Block, outer: Env, depth: number): Block {
    const saved = this.bd;
    this.bd = depth;
    const env = this.shadow(outer, b.dfs.map((d) => d.name), false);
    // a dynamic array's element size and recommendations may use let names
    const dfs = this.list(b.dfs, (d) => {
      if (!d.dynamic) return d;
      const elsize = this.root(d.dynamic.elsize, env);
      const rules = this.list(d.dynamic.rules, (r) => this.rule(r, env));
      return elsize === d.dynamic.elsize && rules === d.dynamic.rules ? d : { ...d, dynamic: { ...d.dynamic, elsize, rules } };
    });
    let changed = dfs !== b.dfs;
    const stmts: Stmt[] = [];
    for (const s of b.stmts) {
      const out = this.stmt(s, env);
      if (out.length !== 1 || out[0] !== s) changed = true;
      for (const o of out) stmts.push(o);
    }
    const rules = this.list(b.rules, (r) => this.rule(r, env));
    this.bd = saved;
    return changed || rules !== b.rules ? { ...b, dfs, stmts, rules } : b;
  }

  /** Map a list, returning the same array when no element changed. */
  private list<T>(xs: T[], f: (x: T) => T): T[] {
    const ys = xs.map(f);
    return sameArray(xs, ys) ? xs : ys;
  }

  /** One statement in, zero or more out (a plain let splices its body into the parent). */
  private stmt(s: Stmt, env: Env): Stmt[] {
    const d = this.bd;
    switch (s.kind) {
      case 'cf': return [this.cf(s, env)];
      case 'let': return this.let(s, env);
      case 'if': {
        const cond = this.root(s.cond, env), body = this.block(s.body, env, d + 1);
        return [cond === s.cond && body === s.body ? s : { ...s, cond, body }];
      }
      case 'for': {
        const inner = this.shadow(env, [s.var], true);
        const pragma = this.pragma(s.pragma, env), first = this.root(s.first, env), last = this.root(s.last, env);
        const body = this.block(s.body, inner, d + 1);
        if (pragma === s.pragma && first === s.first && last === s.last && body === s.body) return [s];
        return [{ ...s, pragma, first, last, body }];
      }
      case 'while': {
        const inner = this.shadow(env, [s.var], true);
        const pragma = this.pragma(s.pragma, env), cond = this.root(s.cond, inner), start = this.root(s.start, env);
        const out = this.id(s.out, env), body = this.block(s.body, inner, d + 1);
        if (pragma === s.pragma && cond === s.cond && start === s.start && out === s.out && body === s.body) return [s];
        return [{ ...s, pragma, cond, start, out, body }];
      }
    }
  }

  private cf(s: CfStmt, env: Env): CfStmt {
    const args = this.list(s.args, (a) => this.root(a, env));
    const rules = this.list(s.rules, (r) => this.rule(r, env));
    const label = s.label && this.label(s.label, env);
    const setdfs = s.setdfs && this.list(s.setdfs, (e) => this.root(e, env));
    const deletes = s.deletes && this.list(s.deletes, (e) => this.root(e, env));
    if (args === s.args && rules === s.rules && label === s.label && setdfs === s.setdfs && deletes === s.deletes) return s;
    const out: CfStmt = { ...s, args, rules };
    if (label) out.label = label;
    if (setdfs) out.setdfs = setdfs;
    if (deletes) out.deletes = deletes;
    return out;
  }

  private let(s: LetStmt, outer: Env): Stmt[] {
    const env = new Env(outer);
    const bound: Bound[] = [];
    for (const b of s.bindings) {
      // later bindings see earlier ones
      this.maxD = 0;
      this.size = 0;
      this.charging = false;
      const value = this.expr(b.value, env, 1);
      this.charging = true;
      const asLoop = s.body.dfs.length > 0 && isIntExpr(value, env);
      env.names.set(b.name, asLoop ? INT_ONLY : { kind: 'let', value, binding: b, depth: this.maxD, size: this.size });
      bound.push({ binding: b, value, asLoop });
    }
    const loops = bound.filter((b) => b.asLoop).length;
    const tooDeep = s.body.dfs.length > 0 && this.bd + loops > MAX_NESTING;
    if (tooDeep) {
      this.error('LUNA-E025', `this let would nest ${loops} loops here, deeper than the limit of ${MAX_NESTING} levels`, s.pos);
    }
    // the rewritten body sits one level deeper per loop (at least one: its block)
    const body = this.block(s.body, env, this.bd + Math.max(1, loops));
    for (const b of bound) {
      if (!b.asLoop && !this.used.has(b.binding)) {
        this.diags.push({
          severity: 'warning', code: 'LUNA-W003', message: `let binding '${b.binding.name}' is never used`, pos: b.binding.pos,
        });
      }
    }
    // A let whose block declares dfs or carries rules needs a construct to hold them.
    if ((s.body.dfs.length === 0 && s.body.rules.length === 0) || tooDeep) return body.stmts;
    return [rewriteWithDfs(s, bound, body)];
  }

  private pragma(p: Pragma | undefined, env: Env): Pragma | undefined {
    if (!p) return p;
    const args = this.list(p.args, (a) => this.root(a, env));
    return args === p.args ? p : { ...p, args };
  }

  private rule(r: Rule, env: Env): Rule {
    switch (r.kind) {
      case 'flags': return r;
      case 'expr': { const expr = this.root(r.expr, env); return expr === r.expr ? r : { ...r, expr }; }
      case 'enum': { const items = this.list(r.items, (i) => this.id(i, env)); return items === r.items ? r : { ...r, items }; }
      case 'assign': {
        const id = this.id(r.id, env), value = this.root(r.value, env);
        return id === r.id && value === r.value ? r : { ...r, id, value };
      }
      case 'map': {
        // `locator_cyclic x[i] => e`: plain-name indices of the pattern are binders, so they
        // are neither substituted nor substituted into inside `e`.
        const binders = r.id.indices.flatMap((i) => (i.kind === 'id' && i.indices.length === 0 ? [i.name] : []));
        const inner = this.shadow(env, binders, true);
        const indices = this.list(r.id.indices, (i) => (i.kind === 'id' && i.indices.length === 0 ? i : this.root(i, env)));
        // `nfparam n => e` names the callee's parameter, not something in this scope.
        const id = r.property === 'nfparam' ? r.id : this.id(indices === r.id.indices ? r.id : { ...r.id, indices }, env, false);
        const expr = this.root(r.expr, inner);
        return id === r.id && expr === r.expr ? r : { ...r, id, expr };
      }
    }
  }

  /** Labels are just names: one bound by let to a name is renamed, otherwise only indices change. */
  private label(l: IdExpr, env: Env): IdExpr {
    if (env.letOf(l.name)?.value.kind === 'id') return this.id(l, env);
    const indices = this.list(l.indices, (i) => this.root(i, env));
    return indices === l.indices ? l : { ...l, indices };
  }

  /** Substitute into an id that must stay an id (rule targets, while out). */
  private id(e: IdExpr, env: Env, substIndices = true): IdExpr {
    const indices = substIndices ? this.list(e.indices, (i) => this.root(i, env, 2)) : e.indices;
    const bound = env.letOf(e.name);
    if (!bound) return indices === e.indices ? e : { ...e, indices };
    this.used.add(bound.binding);
    const v = bound.value;
    if (v.kind === 'id') return this.fits(e, bound, 1) ? { ...v, indices: [...v.indices, ...indices] } : e;
    this.error('LUNA-E022', `'${e.name}' is bound by let to an expression, but a DF name is needed here`, e.pos);
    return indices === e.indices ? e : { ...e, indices };
  }

  /** A whole expression of a statement or rule (or an index of a rule target, `d` = 2). */
  private root(e: Expr, env: Env, d = 1): Expr {
    this.maxD = 0;
    this.size = 0;
    return this.expr(e, env, d);
  }

  /**
   * May `bound` replace the use `e`, found `d` levels down its expression? Its nodes must stay
   * within the nesting limit and the substitution budget; else E025 at the use.
   */
  private fits(e: IdExpr, bound: Extract<Meaning, { kind: 'let' }>, d: number): boolean {
    const deepest = this.bd + d + bound.depth - 2;
    if (deepest > MAX_NESTING) {
      this.error('LUNA-E025', `substituting let '${e.name}' here nests the expression ${deepest} levels deep, beyond the limit of ${MAX_NESTING}`, e.pos);
      return false;
    }
    if (this.charging) this.budget -= bound.size;
    if (this.budget < 0) {
      this.error('LUNA-E025', `substituting let '${e.name}' here makes the program too large (let values are copied at every use)`, e.pos);
      return false;
    }
    this.maxD = Math.max(this.maxD, d + bound.depth - 1);
    this.size += bound.size;
    return true;
  }

  /** `e`, found `d` levels down its expression, with lets substituted. */
  private expr(e: Expr, env: Env, d: number): Expr {
    this.maxD = Math.max(this.maxD, d);
    this.size++;
    switch (e.kind) {
      case 'int': case 'real': case 'string': return e;
      case 'cast': { const x = this.expr(e.expr, env, d + 1); return x === e.expr ? e : { ...e, expr: x }; }
      case 'neg': {
        const { operand, count } = negChain(e);
        const x = this.expr(operand, env, d + 1);
        if (x === operand) return e;
        // rebuild the minuses from the innermost out, keeping their positions
        const negs: Expr[] = [];
        for (let n: Expr = e; n.kind === 'neg' && negs.length < count; n = n.operand) negs.push(n);
        let out = x;
        for (let i = negs.length - 1; i >= 0; i--) out = { ...(negs[i] as Extract<Expr, { kind: 'neg' }>), operand: out };
        return out;
      }
      case 'bin': {
        const { first, links } = binChain(e);
        let acc = this.expr(first, env, d);
        let changed = acc !== first;
        for (const l of links) {
          const right = this.expr(l.right, env, d + 1);
          if (changed || right !== l.right) {
            acc = { ...l, left: acc, right };
            changed = true;
          } else acc = l;
        }
        return acc;
      }
      case 'cond': {
        const { first, links } = condChain(e);
        let acc = this.expr(first, env, d);
        let changed = acc !== first;
        for (const l of links) {
          const then = this.expr(l.then, env, d + 1), els = this.expr(l.else, env, d + 1);
          if (changed || then !== l.then || els !== l.else) {
            acc = { ...l, cond: acc, then, else: els };
            changed = true;
          } else acc = l;
        }
        return acc;
      }
      case 'id': {
        const indices = this.list(e.indices, (i) => this.expr(i, env, d + 1));
        const bound = env.letOf(e.name);
        if (!bound) return indices === e.indices ? e : { ...e, indices };
        this.used.add(bound.binding);
        const v = bound.value;
        if (!this.fits(e, bound, d)) return { kind: 'int', value: 0, pos: e.pos };
        // The value keeps its own positions: diagnostics inside it point at the let binding.
        if (v.kind === 'id') return { ...v, indices: [...v.indices, ...indices] };
        if (indices.length > 0) {
          this.error('LUNA-E021', `'${e.name}' is bound by let to an expression that is not a name; it cannot be indexed`, e.pos);
        }
        return v;
      }
    }
  }
}

interface Bound { binding: LetBinding; value: Expr; asLoop: boolean }

/**
 * Static int-ness without scope resolution: literals, int names, arithmetic over them. A value
 * may share sub-expressions (`let a = x + x, b = a + a`), so each node is looked at once.
 */
function isIntExpr(root: Expr, env: Env): boolean {
  const stack: Expr[] = [root];
  const seen = new Set<Expr>();
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (seen.has(e)) continue;
    seen.add(e);
    switch (e.kind) {
      case 'int': break;
      case 'real': case 'string': return false;
      case 'id': if (e.indices.length > 0 || !env.isInt(e.name)) return false; break;
      case 'neg': stack.push(e.operand); break;
      case 'cast': if (e.to !== 'int') return false; if (e.expr.kind !== 'real') stack.push(e.expr); break;
      case 'bin': stack.push(e.left, e.right); break;
      case 'cond': stack.push(e.cond, e.then, e.else); break;
    }
  }
  return true;
}

/**
 * `let a = e { df t; … }`: the body runs once with fresh dfs. Int-valued bindings become
 * single-iteration loops `for a = e..e` (as the original intended, minus its missing-`begin`
 * crash); other values were substituted, because a loop variable can only hold an int and a
 * name-valued binding must stay an alias. With no int binding the body goes into `if 1`.
 */
function rewriteWithDfs(s: LetStmt, bound: Bound[], body: Block): Stmt {
  const loops = bound.filter((b) => b.asLoop);
  if (loops.length === 0) {
    const one: IfStmt = { kind: 'if', cond: { kind: 'int', value: 1, pos: s.pos }, body, pos: s.pos };
    return one;
  }
  let inner: Block = body;
  for (let i = loops.length - 1; i >= 0; i--) {
    const b = loops[i]!;
    const loop: ForStmt = { kind: 'for', var: b.binding.name, varPos: b.binding.pos, first: b.value, last: b.value, body: inner, pos: s.pos };
    if (i === 0) return loop;
    inner = { dfs: [], stmts: [loop], rules: [], braced: false, pos: s.pos };
  }
  throw new Error('unreachable');
}

// ------------------------------------------------------------------------------ printing

const PREC: Record<string, number> = {
  '||': 2, '&&': 3, '<': 4, '>': 4, '<=': 4, '>=': 4, '==': 4, '!=': 4, '+': 5, '-': 5, '*': 6, '/': 6, '%': 6,
};

/** LuNA source text of an expression, parenthesised only where precedence needs it. */
export function printExpr(e: Expr, outer = 0): string {
  switch (e.kind) {
    case 'int': return String(e.value);
    case 'real': return Number.isInteger(e.value) ? e.value.toFixed(1) : String(e.value);
    case 'string': return JSON.stringify(e.value);
    case 'cast': return `${e.to}(${printExpr(e.expr)})`;
    case 'id': return e.name + e.indices.map((i) => `[${printExpr(i)}]`).join('');
    case 'neg': {
      const { operand, count } = negChain(e);
      return '-'.repeat(count) + printExpr(operand, 7);
    }
    case 'bin': {
      // the left spine in a loop: link k is the left operand of link k+1, printed with its precedence
      const { first, links } = binChain(e);
      let s = printExpr(first, PREC[links[0]!.op]!);
      links.forEach((l, k) => {
        const p = PREC[l.op]!;
        s = `${s} ${l.op} ${printExpr(l.right, p + 1)}`;
        const around = k + 1 < links.length ? PREC[links[k + 1]!.op]! : outer;
        if (p < around) s = `(${s})`;
      });
      return s;
    }
    case 'cond': {
      const { first, links } = condChain(e);
      let s = printExpr(first, 2);
      links.forEach((l, k) => {
        s = `${s} ? ${printExpr(l.then, 2)} : ${printExpr(l.else, 2)}`;
        const around = k + 1 < links.length ? 2 : outer;
        if (around > 1) s = `(${s})`;
      });
      return s;
    }
  }
}
