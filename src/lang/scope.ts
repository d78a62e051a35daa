// Name resolution inside one sub (docs/language.md §6.1): block dfs innermost outward, loop/while
// variables, the sub's parameters; subs are closed scopes, so a chain never crosses a sub.
import type { Expr, ParamType, Pos } from './ast.js';
import { isPlain } from '../core/imports.js';

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
  /** index counts this DF is referenced with */
  counts: Set<number>;
  /** fewest indices of a reference passed to a sub as a `name` (an alias); Infinity if none */
  aliasMin: number;  /** a df declared by `dynamic` (a distributed dynamic array, docs/language.md §9.11) */
  dynamic?: boolean;
}

/** A DF is a `df` or a `name`/`value`/`block` parameter: references to it are dynamic "value"s (§6). */
export function isDf(s: Sym): boolean {
  return s.kind === 'df' || (s.kind === 'param' && !isPlain(s.type));
}

export class Scope {
  private readonly syms = new Map<string, Sym>();
  constructor(readonly parent?: Scope) {}

  /** Declares a name; returns the previous symbol of this same scope, if any. */
  declare(name: string, kind: SymKind, type: ParamType, pos: Pos): Sym | undefined {
    const prev = this.syms.get(name);
    this.syms.set(name, { name, kind, type, pos, counts: new Set(), aliasMin: Infinity });
    return prev;
  }

  lookup(name: string): Sym | undefined {
    for (let s: Scope | undefined = this; s; s = s.parent) {
      const sym = s.syms.get(name);
      if (sym) return sym;
    }
    return undefined;
  }
}

/** Position of an expression's first character (a binary node's own `pos` is its operator). */
export function exprStart(e: Expr): Pos {
  for (;;) {
    if (e.kind === 'bin') e = e.left;
    else if (e.kind === 'cond') e = e.cond;
    else return e.pos;
  }
}

/**
 * Structural equality of expressions, positions ignored (duplicate outputs of one call).
 * Left spines and operands are followed in a loop; other children recurse (bounded by nesting).
 */
export function sameExpr(a: Expr, b: Expr): boolean {
  for (;;) {
    if (a.kind !== b.kind) return false;
    switch (a.kind) {
      case 'int': case 'real': case 'string': return a.value === (b as typeof a).value;
      case 'cast': { const o = b as typeof a; if (a.to !== o.to) return false; a = a.expr; b = o.expr; continue; }
      case 'neg': { const o = b as typeof a; a = a.operand; b = o.operand; continue; }
      case 'bin': {
        const o = b as typeof a;
        if (a.op !== o.op || !sameExpr(a.right, o.right)) return false;
        a = a.left; b = o.left; continue;
      }
      case 'cond': {
        const o = b as typeof a;
        if (!sameExpr(a.then, o.then) || !sameExpr(a.else, o.else)) return false;
        a = a.cond; b = o.cond; continue;
      }
      case 'id': {
        const o = b as typeof a;
        return a.name === o.name && a.indices.length === o.indices.length && a.indices.every((x, i) => sameExpr(x, o.indices[i]!));
      }
    }
  }
}
