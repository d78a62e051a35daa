// Name resolution inside one sub (LANGUAGE.md §6): block dfs innermost outward, loop/while
// variables, the sub's parameters; subs are closed scopes, so a chain never crosses a sub.
import type { Expr, ParamType, Pos } from './ast.js';

/**
 * - df: declared by `df` in a block; param: a sub parameter (its type says what it is);
 * - loop: for/while variable; nfparam: hidden int usable only in locator expressions;
 * - binder: index variable of a map rule pattern (`locator_cyclic x[i] => i`).
 */
export type SymKind = 'df' | 'param' | 'loop' | 'nfparam' | 'binder';

export interface Sym {
  name: string;
  kind: SymKind;
  /** declared type for params; 'int' for loop vars, nfparams and binders; 'name' for dfs */
  type: ParamType;
  pos: Pos;
  /** index counts this DF is referenced with, and whether such a reference is passed on as an alias */
  uses: { count: number; alias: boolean }[];
}

/** A DF is a `df` or a `name`/`value` parameter: references to it are dynamic "value"s (§6). */
export function isDf(s: Sym): boolean {
  return s.kind === 'df' || (s.kind === 'param' && (s.type === 'name' || s.type === 'value'));
}

export class Scope {
  private readonly syms = new Map<string, Sym>();
  constructor(readonly parent?: Scope) {}

  /** Declares a name; returns the previous symbol of this same scope, if any. */
  declare(name: string, kind: SymKind, type: ParamType, pos: Pos): Sym | undefined {
    const prev = this.syms.get(name);
    this.syms.set(name, { name, kind, type, pos, uses: [] });
    return prev;
  }

  lookup(name: string): Sym | undefined {
    return this.syms.get(name) ?? this.parent?.lookup(name);
  }
}

/** Position of an expression's first character (a binary node's own `pos` is its operator). */
export function exprStart(e: Expr): Pos {
  switch (e.kind) {
    case 'bin': return exprStart(e.left);
    case 'cond': return exprStart(e.cond);
    default: return e.pos;
  }
}

/** Structural equality of expressions, positions ignored (duplicate outputs of one call). */
export function sameExpr(a: Expr, b: Expr): boolean {
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'int': case 'real': case 'string': return a.value === (b as typeof a).value;
    case 'cast': { const o = b as typeof a; return a.to === o.to && sameExpr(a.expr, o.expr); }
    case 'neg': return sameExpr(a.operand, (b as typeof a).operand);
    case 'bin': { const o = b as typeof a; return a.op === o.op && sameExpr(a.left, o.left) && sameExpr(a.right, o.right); }
    case 'cond': { const o = b as typeof a; return sameExpr(a.cond, o.cond) && sameExpr(a.then, o.then) && sameExpr(a.else, o.else); }
    case 'id': {
      const o = b as typeof a;
      return a.name === o.name && a.indices.length === o.indices.length && a.indices.every((x, i) => sameExpr(x, o.indices[i]!));
    }
  }
}
