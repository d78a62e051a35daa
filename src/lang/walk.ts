// Helpers for walking expressions without recursing along one level of the source: a chain
// `a + b - c …` is a tree whose left spine is as long as the chain, `a ? b : c ? d : e …` nests
// through the condition, `- - - x` through the operand. Walkers take such a chain in a loop and
// recurse only into the other children, which the parser's nesting limit bounds (MAX_NESTING).
import type { Binary, Conditional, Expr, Neg } from './ast.js';

/** `((first op1 r1) op2 r2) …`: the innermost left operand and the links, innermost first. */
export function binChain(e: Binary): { first: Expr; links: Binary[] } {
  const links: Binary[] = [];
  let x: Expr = e;
  while (x.kind === 'bin') {
    links.push(x);
    x = x.left;
  }
  links.reverse();
  return { first: x, links };
}

/** `((first ? t1 : e1) ? t2 : e2) …`: the innermost condition and the links, innermost first. */
export function condChain(e: Conditional): { first: Expr; links: Conditional[] } {
  const links: Conditional[] = [];
  let x: Expr = e;
  while (x.kind === 'cond') {
    links.push(x);
    x = x.cond;
  }
  links.reverse();
  return { first: x, links };
}

/** `- - … operand`: the operand, how many minuses, and the innermost one. */
export function negChain(e: Neg): { operand: Expr; count: number; innermost: Neg } {
  let n: Neg = e;
  let count = 1;
  while (n.operand.kind === 'neg') {
    n = n.operand;
    count++;
  }
  return { operand: n.operand, count, innermost: n };
}

/**
 * Nesting depth of an expression as the parser counts it: a chain is one level, each of its
 * other children (a right operand, a `?:` branch, a negated or cast operand, an index) one more.
 * Computed with an explicit stack, so any tree can be measured.
 */
export function exprDepth(root: Expr): number {
  let max = 0;
  const stack: [Expr, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [e, d] = stack.pop()!;
    if (d > max) max = d;
    switch (e.kind) {
      case 'int': case 'real': case 'string': break;
      case 'id': for (const i of e.indices) stack.push([i, d + 1]); break;
      case 'cast': stack.push([e.expr, d + 1]); break;
      case 'neg': { const { operand } = negChain(e); stack.push([operand, d + 1]); break; }
      case 'bin': {
        const { first, links } = binChain(e);
        stack.push([first, d]);
        for (const l of links) stack.push([l.right, d + 1]);
        break;
      }
      case 'cond': {
        const { first, links } = condChain(e);
        stack.push([first, d]);
        for (const l of links) stack.push([l.then, d + 1], [l.else, d + 1]);
        break;
      }
    }
  }
  return max;
}

/** Every sub-expression (root included), in no particular order, without recursion. */
export function* subExprs(root: Expr): Generator<Expr> {
  const stack: Expr[] = [root];
  while (stack.length > 0) {
    const e = stack.pop()!;
    yield e;
    switch (e.kind) {
      case 'int': case 'real': case 'string': break;
      case 'id': for (const i of e.indices) stack.push(i); break;
      case 'cast': stack.push(e.expr); break;
      case 'neg': stack.push(e.operand); break;
      case 'bin': stack.push(e.left, e.right); break;
      case 'cond': stack.push(e.cond, e.then, e.else); break;
    }
  }
}
