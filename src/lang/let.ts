// `let` elimination (LANGUAGE.md §4.3), done before any checking, as the original's
// substitution_let.py does — but covering every rule (the original only touched the first one)
// and giving the form whose body declares dfs its intended meaning (see rewriteWithDfs).
import type {
  Block, CfStmt, Expr, ForStmt, IdExpr, IfStmt, LetBinding, LetStmt, Pragma, Program, Rule, Stmt, TopLevel,
} from './ast.js';
import type { Diagnostic } from './diagnostics.js';
import type { Origin } from './source.js';

/** Positioned diagnostic before the origin is known; check/index resolve `pos` to an Origin. */
export interface PosDiagnostic extends Diagnostic {
  pos: number;
}

/** Let bindings in effect plus the names known to be plain ints (loop/while vars, int params). */
interface Env {
  /** value of each let name in effect, with its binding (identity for the unused check) */
  lets: Map<string, { value: Expr; binding: LetBinding }>;
  ints: Set<string>;
}

/**
 * Removes every `let` from the program. Diagnostics carry `pos`; they also get an `origin`
 * when `originOf` is given.
 */
export function substituteLet(
  program: Program,
  originOf?: (pos: number) => Origin,
): { program: Program; diagnostics: PosDiagnostic[] } {
  const diagnostics: PosDiagnostic[] = [];
  const items = program.items.map((item): TopLevel => {
    if (item.kind !== 'sub') return item;
    const ints = new Set(item.params.filter((p) => p.type === 'int').map((p) => p.name));
    return { ...item, body: new LetPass(diagnostics).block(item.body, { lets: new Map(), ints }) };
  });
  if (originOf) for (const d of diagnostics) d.origin = originOf(d.pos);
  return { program: { ...program, items }, diagnostics };
}

class LetPass {
  constructor(private readonly diags: PosDiagnostic[]) {}

  /** Names declared by a construct hide outer let bindings of the same name. */
  private shadow(env: Env, names: string[], asInt: boolean): Env {
    if (!names.some((n) => env.lets.has(n) || env.ints.has(n) || asInt)) return env;
    const lets = new Map(env.lets);
    const ints = new Set(env.ints);
    for (const n of names) {
      lets.delete(n);
      if (asInt) ints.add(n);
      else ints.delete(n);
    }
    return { lets, ints };
  }

  block(b: Block, outer: Env): Block {
    const env = this.shadow(outer, b.dfs.map((d) => d.name), false);
    const stmts: Stmt[] = [];
    for (const s of b.stmts) stmts.push(...this.stmt(s, env));
    return { ...b, stmts, rules: b.rules.map((r) => this.rule(r, env)) };
  }

  /** One statement in, zero or more out (a plain let splices its body into the parent). */
  private stmt(s: Stmt, env: Env): Stmt[] {
    switch (s.kind) {
      case 'cf': return [this.cf(s, env)];
      case 'let': return this.let(s, env);
      case 'if': return [{ ...s, cond: this.expr(s.cond, env), body: this.block(s.body, env) }];
      case 'for': {
        const inner = this.shadow(env, [s.var], true);
        return [{
          ...s, pragma: this.pragma(s.pragma, env), first: this.expr(s.first, env),
          last: this.expr(s.last, env), body: this.block(s.body, inner),
        }];
      }
      case 'while': {
        const inner = this.shadow(env, [s.var], true);
        return [{
          ...s, pragma: this.pragma(s.pragma, env), cond: this.expr(s.cond, inner),
          start: this.expr(s.start, env), out: this.id(s.out, env), body: this.block(s.body, inner),
        }];
      }
    }
  }

  private cf(s: CfStmt, env: Env): CfStmt {
    const out: CfStmt = { ...s, args: s.args.map((a) => this.expr(a, env)), rules: s.rules.map((r) => this.rule(r, env)) };
    if (s.label) out.label = this.label(s.label, env);
    if (s.setdfs) out.setdfs = s.setdfs.map((e) => this.expr(e, env));
    if (s.deletes) out.deletes = s.deletes.map((e) => this.expr(e, env));
    return out;
  }

  private let(s: LetStmt, outer: Env): Stmt[] {
    const used = new Set<LetBinding>();
    const pass = new LetPass(this.diags);
    pass.onUse = (b) => { used.add(b); this.onUse(b); };
    let env = outer;
    const bound: Bound[] = [];
    for (const b of s.bindings) {
      const value = pass.expr(b.value, env); // later bindings see earlier ones
      const asLoop = s.body.dfs.length > 0 && isIntExpr(value, env);
      if (asLoop) {
        env = this.shadow(env, [b.name], true);
      } else {
        env = { lets: new Map(env.lets).set(b.name, { value, binding: b }), ints: new Set(env.ints) };
        env.ints.delete(b.name);
      }
      bound.push({ binding: b, value, asLoop });
    }
    const body = pass.block(s.body, env);
    for (const b of bound) {
      if (!b.asLoop && !used.has(b.binding)) {
        this.diags.push({
          severity: 'warning', code: 'LUNA-W003', message: `let binding '${b.binding.name}' is never used`, pos: b.binding.pos,
        });
      }
    }
    // A let whose block declares dfs or carries rules needs a construct to hold them.
    if (s.body.dfs.length === 0 && s.body.rules.length === 0) return body.stmts;
    return [rewriteWithDfs(s, bound, body)];
  }

  /** Called for every substituted let name (to find unused bindings). */
  onUse: (binding: LetBinding) => void = () => {};

  private pragma(p: Pragma | undefined, env: Env): Pragma | undefined {
    return p && { ...p, args: p.args.map((a) => this.expr(a, env)) };
  }

  private rule(r: Rule, env: Env): Rule {
    switch (r.kind) {
      case 'flags': return r;
      case 'expr': return { ...r, expr: this.expr(r.expr, env) };
      case 'enum': return { ...r, items: r.items.map((i) => this.id(i, env)) };
      case 'assign': return { ...r, id: this.id(r.id, env), value: this.expr(r.value, env) };
      case 'map': {
        // `locator_cyclic x[i] => e`: plain-name indices of the pattern are binders, so they
        // are neither substituted nor substituted into inside `e`.
        const binders = r.id.indices.flatMap((i) => (i.kind === 'id' && i.indices.length === 0 ? [i.name] : []));
        const inner = this.shadow(env, binders, true);
        const indices = r.id.indices.map((i) => (i.kind === 'id' && i.indices.length === 0 ? i : this.expr(i, env)));
        // `nfparam n => e` names the callee's parameter, not something in this scope.
        const id = r.property === 'nfparam' ? r.id : this.id({ ...r.id, indices }, env, false);
        return { ...r, id, expr: this.expr(r.expr, inner) };
      }
    }
  }

  /** Labels are just names: one bound by let to a name is renamed, otherwise only indices change. */
  private label(l: IdExpr, env: Env): IdExpr {
    if (env.lets.get(l.name)?.value.kind === 'id') return this.id(l, env);
    return { ...l, indices: l.indices.map((i) => this.expr(i, env)) };
  }

  /** Substitute into an id that must stay an id (rule targets, while out). */
  private id(e: IdExpr, env: Env, substIndices = true): IdExpr {
    const indices = substIndices ? e.indices.map((i) => this.expr(i, env)) : e.indices;
    const bound = env.lets.get(e.name);
    if (!bound) return { ...e, indices };
    this.onUse(bound.binding);
    const v = bound.value;
    if (v.kind === 'id') return { ...v, indices: [...v.indices, ...indices] };
    this.diags.push({
      severity: 'error', code: 'LUNA-E022',
      message: `'${e.name}' is bound by let to an expression, but a DF name is needed here`, pos: e.pos,
    });
    return { ...e, indices };
  }

  expr(e: Expr, env: Env): Expr {
    switch (e.kind) {
      case 'int': case 'real': case 'string': return e;
      case 'cast': return { ...e, expr: this.expr(e.expr, env) };
      case 'neg': return { ...e, operand: this.expr(e.operand, env) };
      case 'bin': return { ...e, left: this.expr(e.left, env), right: this.expr(e.right, env) };
      case 'cond': return { ...e, cond: this.expr(e.cond, env), then: this.expr(e.then, env), else: this.expr(e.else, env) };
      case 'id': {
        const indices = e.indices.map((i) => this.expr(i, env));
        const bound = env.lets.get(e.name);
        if (!bound) return { ...e, indices };
        this.onUse(bound.binding);
        const v = bound.value;
        // The value keeps its own positions: diagnostics inside it point at the let binding.
        if (v.kind === 'id') return { ...v, indices: [...v.indices, ...indices] };
        if (indices.length > 0) {
          this.diags.push({
            severity: 'error', code: 'LUNA-E021',
            message: `'${e.name}' is bound by let to an expression that is not a name; it cannot be indexed`, pos: e.pos,
          });
        }
        return v;
      }
    }
  }
}

interface Bound { binding: LetBinding; value: Expr; asLoop: boolean }

/** Static int-ness without scope resolution: literals, int names, arithmetic over them. */
function isIntExpr(e: Expr, env: Env): boolean {
  switch (e.kind) {
    case 'int': return true;
    case 'real': case 'string': return false;
    case 'id': return e.indices.length === 0 && env.ints.has(e.name);
    case 'neg': return isIntExpr(e.operand, env);
    case 'cast': return e.to === 'int' && (isIntExpr(e.expr, env) || e.expr.kind === 'real');
    case 'bin': return isIntExpr(e.left, env) && isIntExpr(e.right, env);
    case 'cond': return isIntExpr(e.cond, env) && isIntExpr(e.then, env) && isIntExpr(e.else, env);
  }
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
    case 'neg': return `-${printExpr(e.operand, 7)}`;
    case 'bin': {
      const p = PREC[e.op]!;
      // left-associative: the right operand needs parentheses at equal precedence
      const s = `${printExpr(e.left, p)} ${e.op} ${printExpr(e.right, p + 1)}`;
      return p < outer ? `(${s})` : s;
    }
    case 'cond': {
      const s = `${printExpr(e.cond, 2)} ? ${printExpr(e.then, 2)} : ${printExpr(e.else, 2)}`;
      return outer > 1 ? `(${s})` : s;
    }
  }
}
