// AST of a LuNA program (docs/language.md §4.1). Every node carries `pos`: a character offset into
// the preprocessed text; SourceMap (source-map.ts) turns it into file:line:col of the real source.

import type { ParamType } from '../core/imports.js';

export type { ParamType } from '../core/imports.js';

export type Pos = number;

export interface Param {
  type: ParamType;
  /** `value&` (parsed, no effect) */
  ref?: boolean;
  name: string;
  /** pos = the type keyword; namePos = the parameter name (luna-ts addition) */
  namePos?: Pos;
  pos: Pos;
}

/** Extern (import) parameter: names are optional and ignored. */
export interface ExternParam {
  type: ParamType;
  ref?: boolean;
  name?: string;
  /** position of the (optional) name (luna-ts addition) */
  namePos?: Pos;
  pos: Pos;
}

export interface Pragma {
  /** rush | static | static_for | unrolling — parsed and ignored downstream */
  kind: string;
  args: Expr[];
  pos: Pos;
}

// ---------------------------------------------------------------------------------- expressions

export type BinOp = '||' | '&&' | '<' | '>' | '<=' | '>=' | '==' | '!=' | '+' | '-' | '*' | '/' | '%';

export interface IntLit { kind: 'int'; value: number; pos: Pos }
export interface RealLit { kind: 'real'; value: number; pos: Pos }
export interface StringLit { kind: 'string'; value: string; pos: Pos }
export interface Cast { kind: 'cast'; to: 'int' | 'real' | 'string'; expr: Expr; pos: Pos }
/** A (possibly indexed) name: a DF, a loop variable, a parameter, a label. */
export interface IdExpr { kind: 'id'; name: string; indices: Expr[]; pos: Pos }
export interface Neg { kind: 'neg'; operand: Expr; pos: Pos }
/** `pos` of a binary expression is the operator's position (op_pos in the original). */
export interface Binary { kind: 'bin'; op: BinOp; left: Expr; right: Expr; pos: Pos }
export interface Conditional { kind: 'cond'; cond: Expr; then: Expr; else: Expr; pos: Pos }

export type Expr = IntLit | RealLit | StringLit | Cast | IdExpr | Neg | Binary | Conditional;

// ------------------------------------------------------------------------------------- rules

/** `NAME id = expr;` e.g. `req_count x[i] = 2;` */
export interface AssignRule { kind: 'assign'; property: string; id: IdExpr; value: Expr; pos: Pos }
/** `NAME id => expr;` e.g. `locator_cyclic x[i] => i;` */
export interface MapRule { kind: 'map'; property: string; id: IdExpr; expr: Expr; pos: Pos }
/** `NAME id, id;` e.g. `request a, b[i];` */
export interface EnumRule { kind: 'enum'; property: string; items: IdExpr[]; pos: Pos }
/** `NAME: expr;` e.g. `locator_cyclic: i+1;` */
export interface ExprRule { kind: 'expr'; property: string; expr: Expr; pos: Pos }
/** `NAME, NAME;` e.g. `stealable;` */
export interface FlagsRule { kind: 'flags'; flags: string[]; pos: Pos }

export type Rule = AssignRule | MapRule | EnumRule | ExprRule | FlagsRule;

// -------------------------------------------------------------------------------- statements

/**
 * `dynamic P(elsize) @ { ordered; capacity: e; home: e; };` (luna-ts, docs/language.md §9.11):
 * the DF P names a distributed dynamic array of elements of `elsize` bytes.
 */
export interface DynamicDecl {
  elsize: Expr;
  /** recommendations: `ordered`/`unordered` flags, `capacity: e;`, `home: e;` */
  rules: Rule[];
  /** the word `dynamic` */
  pos: Pos;
}

export interface DfDecl {
  name: string;
  pos: Pos;
  /** declared by `dynamic`, not by the df line */
  dynamic?: DynamicDecl;
}

/** `{ df a, b; stmts } @ { rules }` or a single unbraced statement (braced = false). */
export interface Block {
  dfs: DfDecl[];
  stmts: Stmt[];
  rules: Rule[];
  braced: boolean;
  pos: Pos;
}

/** `cf label[i]: callee(args) >> (setdfs) --> (deletes) @ { rules };` */
export interface CfStmt {
  kind: 'cf';
  /** explicit label; when absent the original uses `_l<line>` */
  label?: IdExpr;
  callee: string;
  calleePos: Pos;
  args: Expr[];
  /** `>> (…)`: set to int 1 and published after the call */
  setdfs?: Expr[];
  /** `--> (…)`: destroyed after the call */
  deletes?: Expr[];
  rules: Rule[];
  pos: Pos;
}

export interface LetBinding { name: string; value: Expr; pos: Pos }
export interface LetStmt { kind: 'let'; bindings: LetBinding[]; body: Block; pos: Pos }

export interface ForStmt {
  kind: 'for';
  pragma?: Pragma;
  var: string;
  varPos: Pos;
  first: Expr;
  last: Expr;
  body: Block;
  pos: Pos;
}

/** `while cond, v = start .. out W block` */
export interface WhileStmt {
  kind: 'while';
  pragma?: Pragma;
  cond: Expr;
  var: string;
  varPos: Pos;
  start: Expr;
  out: IdExpr;
  body: Block;
  pos: Pos;
}

export interface IfStmt { kind: 'if'; cond: Expr; body: Block; pos: Pos }

export type Stmt = CfStmt | LetStmt | ForStmt | WhileStmt | IfStmt;

// --------------------------------------------------------------------------------- top level

export interface SubDef {
  kind: 'sub';
  pragma?: Pragma;
  name: string;
  namePos: Pos;
  params: Param[];
  body: Block;
  pos: Pos;
}

/** `C++ sub NAME(params) __block(N)` — needs a TypeScript export of the same name. */
export interface ForeignSub {
  kind: 'foreign';
  name: string;
  namePos: Pos;
  params: Param[];
  block: number;
  pos: Pos;
}

/** `C++ head __block(N)` */
export interface ForeignHead { kind: 'head'; name: string; block: number; pos: Pos }

/** `import code(params) as alias : CUDA, NOCPU, WAITS;` */
export interface Import {
  kind: 'import';
  code: string;
  codePos: Pos;
  alias: string;
  aliasPos: Pos;
  params: ExternParam[];
  cuda: boolean;
  nocpu: boolean;
  /** `: WAITS`: the ucode may wait for its node (luna-ts addition) */
  waits: boolean;
  pos: Pos;
}

export type TopLevel = SubDef | ForeignSub | ForeignHead | Import;

export interface Program {
  items: TopLevel[];
}
