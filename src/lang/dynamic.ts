// Distributed dynamic arrays in the language (docs/language.md §9.11): the checks of a
// `dynamic P(elsize) @ { … };` declaration, and the lowering of declarations and of the global
// operations (`rearrange` with its `weights`, `global_count`, `send_by`) into calls of the code fragments the runtime provides
// (core/builtins.ts). After lowering the program is plain LuNA: the compiler and the runtime
// see one more CF per declaration and two more imports, nothing new.
import type { Block, CfStmt, DfDecl, DynamicDecl, Expr, Import, IntLit, Pos, Program, Rule, Stmt } from './ast.js';
import type { ParamType } from '../core/imports.js';
import { BLOCK_OF, DYNAMIC_DECLARATION, DYNAMIC_OPERATIONS, REARRANGE, type BuiltinCode } from '../core/builtins.js';
import { exprStart } from './scope.js';

/** The recommendations a declaration takes: flags, and rules `name: int expression;`. */
const ORDER_FLAGS = new Set(['ordered', 'unordered']);
const NUMBER_RULES = new Set(['capacity', 'home', 'blocks']);

type Ty = 'int' | 'real' | 'string' | 'value' | 'error';

/** What the checker lends the declaration's checks. */
export interface DeclChecks {
  err(code: string, message: string, pos: Pos): void;
  /** the static type of an expression in the declaring block's scope (reporting its own errors) */
  type(e: Expr): Ty;
}

/** LUNA-E028 for everything wrong with one declaration's element size and recommendations. */
export function checkDynamicDecl(d: DfDecl, decl: DynamicDecl, c: DeclChecks): void {
  const intExpr = (e: Expr, what: string, min: number): void => {
    const t = c.type(e);
    if (t === 'real' || t === 'string') c.err('LUNA-E028', `${what} of dynamic array '${d.name}' must be an int, not a ${t}`, exprStart(e));
    else if (e.kind === 'int' && e.value < min) c.err('LUNA-E028', `${what} of dynamic array '${d.name}' is ${e.value}; it must be ${min === 1 ? 'positive' : 'zero or more'}`, e.pos);
    else if (e.kind === 'neg' && e.operand.kind === 'int' && e.operand.value > 0) c.err('LUNA-E028', `${what} of dynamic array '${d.name}' is -${e.operand.value}; it must be ${min === 1 ? 'positive' : 'zero or more'}`, e.pos);
  };
  intExpr(decl.elsize, 'the element size (bytes)', 1);
  const seen = new Map<string, Pos>();
  const once = (what: string, pos: Pos): void => {
    if (seen.has(what)) c.err('LUNA-E028', `${what.includes('/') ? 'an order (ordered/unordered)' : `'${what}'`} is recommended twice for dynamic array '${d.name}'`, pos);
    seen.set(what, pos);
  };
  for (const r of decl.rules) {
    if (r.kind === 'flags') {
      for (const f of r.flags) {
        if (!ORDER_FLAGS.has(f)) { c.err('LUNA-E028', unknown(d.name, f), r.pos); continue; }
        once('ordered/unordered', r.pos);
      }
    } else if (r.kind === 'expr' && NUMBER_RULES.has(r.property)) {
      once(r.property, r.pos);
      intExpr(r.expr, r.property === 'home' ? "the 'home' node" : r.property === 'blocks' ? "'blocks' (a node)" : "the 'capacity' (elements)", r.property === 'blocks' ? 1 : 0);
    } else {
      c.err('LUNA-E028', unknown(d.name, r.property), r.pos);
    }
  }
}

const unknown = (name: string, what: string): string =>
  `'${what}' is no recommendation of dynamic array '${name}': it takes 'ordered;' or 'unordered;', 'capacity: n;', 'home: k;' and 'blocks: b;'`;

// ------------------------------------------------------------------------------ lowering

/** Whether the program declares a dynamic array or calls one of their operations (the runtime's, not its own). */
function usesDynamic(program: Program, ops: ReadonlySet<string>): boolean {
  for (const b of blocks(program)) {
    if (b.dfs.some((d) => d.dynamic)) return true;
    if (b.stmts.some((s) => s.kind === 'cf' && ops.has(s.callee))) return true;
  }
  return false;
}

function* blocks(program: Program): Generator<Block> {
  const todo: Block[] = [];
  for (const it of program.items) if (it.kind === 'sub') todo.push(it.body);
  for (let b = todo.pop(); b; b = todo.pop()) {
    yield b;
    for (const s of b.stmts) if (s.kind !== 'cf') todo.push(s.body);
  }
}

/**
 * The checked program with each declaration made a CF of the runtime's declaration code
 * (appended to its block: the other statements keep their spawn numbers, hence their global
 * ids) and each call of `rearrange`/`global_count` that the program does not define itself
 * bound to the runtime's code. Unchanged when it uses no dynamic array.
 */
export function lowerDynamic(program: Program): Program {
  const defined = new Set(program.items.flatMap((it) => (it.kind === 'import' ? [it.alias] : it.kind === 'sub' || it.kind === 'foreign' ? [it.name] : [])));
  const ops = new Set([...DYNAMIC_OPERATIONS.keys()].filter((n) => !defined.has(n)));
  if (!usesDynamic(program, ops)) return program;
  const used = new Set<BuiltinCode>();
  let fresh = 0;
  // `dyn`: the dynamic arrays in scope (an inner df of the same name hides one)
  const lowerBlock = (b: Block, outer: ReadonlySet<string>): Block => {
    const dyn = new Set(outer);
    for (const d of b.dfs) if (d.dynamic) dyn.add(d.name); else dyn.delete(d.name);
    const dfs = [...b.dfs], extra: Stmt[] = [];
    // `P[j]` to a block parameter: a DF of this block execution set to the handle of P's block j
    // by the runtime's `block of` (appended, like the declarations: the other statements keep their spawn numbers)
    const blockArg = (a: Expr, s: CfStmt): Expr => {
      if (a.kind !== 'id' || a.indices.length !== 1 || !dyn.has(a.name)) return a;
      const name = `${a.name}#block${fresh++}`;
      dfs.push({ name, pos: a.pos });
      extra.push({ kind: 'cf', callee: BLOCK_OF.alias, calleePos: s.calleePos, args: [{ kind: 'id', name: a.name, indices: [], pos: a.pos }, a.indices[0]!, { kind: 'id', name, indices: [], pos: a.pos }], rules: [], pos: s.pos });
      used.add(BLOCK_OF);
      return { kind: 'id', name, indices: [], pos: a.pos };
    };
    const stmts: Stmt[] = b.stmts.map((s) => lowerStmt(s.kind === 'cf' ? { ...s, args: s.args.map((a) => blockArg(a, s)) } : s, dyn));
    for (const d of b.dfs) if (d.dynamic) { stmts.push(declaration(d, d.dynamic)); used.add(DYNAMIC_DECLARATION); }
    stmts.push(...extra);
    return { ...b, dfs, stmts };
  };
  const lowerStmt = (s: Stmt, dyn: ReadonlySet<string>): Stmt => {
    if (s.kind !== 'cf') return { ...s, body: lowerBlock(s.body, dyn) } as Stmt;
    if (!ops.has(s.callee)) return s;
    const op = DYNAMIC_OPERATIONS.get(s.callee)!.code;
    used.add(op);
    if (op !== REARRANGE) return s;
    // `@ { neighbours; }` on a rearrangement: moves only between adjacent nodes
    const neighbours = s.rules.some((r) => r.kind === 'flags' && r.flags.includes('neighbours'));
    // `@ { weights: W; }`: shares in proportion to W's numbers. W becomes an input of the CF, so
    // the rearrangement waits for it like for any argument. The flags: 1 neighbours, 2 weighted.
    const weights = s.rules.find((r): r is Extract<Rule, { kind: 'expr' }> => r.kind === 'expr' && r.property === 'weights');
    const rules = weights ? s.rules.filter((r) => r !== weights) : s.rules;
    return { ...s, args: [...s.args, int((neighbours ? 1 : 0) | (weights ? 2 : 0), s.pos), weights?.expr ?? int(0, s.pos)], rules };
  };
  const items = program.items.map((it) => (it.kind === 'sub' ? { ...it, body: lowerBlock(it.body, new Set()) } : it));
  for (const code of used) items.push(builtinImport(code));
  return { items };
}

/** `dynamic P(e) @ { ordered; capacity: c; home: h; blocks: b; }` → `dynamic array(P, e, c, h, 1, b)`. */
function declaration(d: DfDecl, decl: DynamicDecl): CfStmt {
  const rule = (name: string): Expr | undefined => decl.rules.find((r): r is Extract<Rule, { kind: 'expr' }> => r.kind === 'expr' && r.property === name)?.expr;
  const ordered = decl.rules.some((r) => r.kind === 'flags' && r.flags.includes('ordered'));
  const args: Expr[] = [
    { kind: 'id', name: d.name, indices: [], pos: d.pos },
    decl.elsize,
    rule('capacity') ?? int(0, decl.pos),
    rule('home') ?? int(0, decl.pos),
    int(ordered ? 1 : 0, decl.pos),
    rule('blocks') ?? int(1, decl.pos),
  ];
  return { kind: 'cf', callee: DYNAMIC_DECLARATION.alias, calleePos: decl.pos, args, rules: [], pos: decl.pos };
}

function int(value: number, pos: Pos): IntLit {
  return { kind: 'int', value, pos };
}

function builtinImport(code: BuiltinCode): Import {
  return {
    kind: 'import', code: code.symbol, codePos: 0, alias: code.alias, aliasPos: 0,
    params: code.params.map((type: ParamType) => ({ type, pos: 0 })), cuda: false, nocpu: false, waits: true, pos: 0,
  };
}
