// LuNA parser (LANGUAGE.md §4.1–4.2): hand-written recursive descent over the token list, with
// error recovery so every syntax error of a file is reported in one run.
//
// Diagnostic codes:
//   LUNA-S001  syntax error: expected X, found Y
//   LUNA-S002  syntax error: a reserved word (`else`, `in`, `SIZE`) where the grammar has none
//   LUNA-S003  empty braced block (`{}` — a block needs at least one statement)
//   LUNA-S004  `df` line not first in its block, or a second `df` line
//   LUNA-S005  `C++ NAME __block(N)` with NAME other than `head`
//   LUNA-S006  `__block(N)` refers to a foreign block that does not exist
//
// Recovery: an error throws `Bail` to the nearest construct that can resynchronise — a
// behaviour rule (skip to `;`/`}`), a statement (skip to `;` or past a balanced `{…}`), a
// top-level item (skip to the next `sub`/`import`/`C++`). Only one error per token offset is
// reported, so nested constructs giving up at the same place do not repeat themselves.
import type {
  Block, CfStmt, DfDecl, Expr, ExternParam, ForStmt, IdExpr, IfStmt, Import, LetBinding, LetStmt,
  Param, ParamType, Pragma, Program, Rule, Stmt, SubDef, TopLevel, WhileStmt, BinOp, ForeignHead,
  ForeignSub,
} from './ast.js';
import type { Diagnostic } from './diagnostics.js';
import type { Preprocessed } from './source.js';
import { RESERVED, tokenize, type Token } from './lexer.js';
import { error, originOf, sortDiagnostics } from './origin.js';
import { preprocess, type PreprocessOptions } from './preprocess.js';

/** Unwinds to a recovery point; the diagnostic has already been recorded. */
class Bail extends Error {}

const PARAM_TYPES = new Set<string>(['int', 'real', 'string', 'name', 'value']);
const PRAGMA_KINDS = new Set(['rush', 'static', 'static_for', 'unrolling']);
const TOP_START = new Set(['sub', 'import', 'C++']);

/** Binary levels from loosest to tightest (all left-associative); `? :` sits above them. */
const BINARY_LEVELS: readonly (readonly BinOp[])[] = [
  ['||'],
  ['&&'],
  ['<', '>', '<=', '>=', '==', '!='],
  ['+', '-'],
  ['*', '/', '%'],
];

function describe(t: Token): string {
  switch (t.type) {
    case 'EOF':
      return 'end of file';
    case 'NAME':
      return `name '${t.text}'`;
    case 'INT':
    case 'REAL':
      return `number ${t.text}`;
    case 'STRING':
      return `string ${t.text.length > 24 ? t.text.slice(0, 20) + '..."' : t.text}`;
    default:
      return RESERVED.has(t.type) ? `reserved word '${t.text}'` : `'${t.text}'`;
  }
}

class Parser {
  private k = 0;
  readonly diagnostics: Diagnostic[] = [];
  /** token offsets that already carry an error */
  private readonly reported = new Set<number>();

  constructor(
    private readonly pre: Preprocessed,
    private readonly toks: Token[],
  ) {}

  // ---------------------------------------------------------------------------- token access

  private peek(o = 0): Token {
    return this.toks[Math.min(this.k + o, this.toks.length - 1)]!;
  }

  private at(type: string): boolean {
    return this.peek().type === type;
  }

  private next(): Token {
    const t = this.peek();
    if (t.type !== 'EOF') this.k++;
    return t;
  }

  private accept(type: string): Token | null {
    return this.at(type) ? this.next() : null;
  }

  private expect(type: string, what = `'${type}'`): Token {
    if (this.at(type)) return this.next();
    return this.fail(what);
  }

  /** Record an error at token `t` (once per offset). */
  private report(code: string, message: string, t: Token = this.peek()): void {
    if (this.reported.has(t.pos)) return;
    this.reported.add(t.pos);
    this.diagnostics.push(error(code, message, originOf(this.pre, t.pos)));
  }

  /** "syntax error: expected X, found Y" at the current token, then unwind. */
  private fail(expected: string, hint = ''): never {
    const t = this.peek();
    const reserved = RESERVED.has(t.type);
    if (reserved && t.type === 'else') hint ||= ' (LuNA has no else: write a second if with the negated condition)';
    this.report(reserved ? 'LUNA-S002' : 'LUNA-S001', `syntax error: expected ${expected}, found ${describe(t)}${hint}`, t);
    throw new Bail();
  }

  // ------------------------------------------------------------------------------- recovery

  private atTopStart(): boolean {
    return TOP_START.has(this.peek().type);
  }

  /** After a failed statement: skip to `;` or past a balanced `{…}` (and its `@{…}`). */
  private syncStatement(): void {
    let depth = 0;
    for (;;) {
      const t = this.peek();
      if (t.type === 'EOF' || (depth === 0 && TOP_START.has(t.type))) return;
      if (t.type === '{') depth++;
      else if (t.type === '}') {
        if (depth === 0) return;
        if (--depth === 0) {
          this.next();
          if (!this.at('@')) return;
          continue;
        }
      } else if (t.type === ';' && depth === 0) {
        this.next();
        return;
      }
      this.next();
    }
  }

  private syncTop(start: number): void {
    if (this.k === start) this.next();
    while (!this.at('EOF') && !this.atTopStart()) this.next();
  }

  // ------------------------------------------------------------------------------ top level

  program(): Program {
    const items: TopLevel[] = [];
    if (this.at('EOF')) {
      this.report('LUNA-S001', `syntax error: expected 'sub', 'import' or 'C++', found end of file`);
    }
    while (!this.at('EOF')) {
      const start = this.k;
      try {
        items.push(this.topLevel());
      } catch (e) {
        if (!(e instanceof Bail)) throw e;
        this.syncTop(start);
      }
    }
    return { items };
  }

  private topLevel(): TopLevel {
    switch (this.peek().type) {
      case 'sub':
        return this.subDef();
      case 'import':
        return this.importDecl();
      case 'C++':
        return this.foreign();
      default:
        return this.fail(`'sub', 'import' or 'C++'`);
    }
  }

  private subDef(): SubDef {
    const pos = this.next().pos;
    const pragma = this.at('<<') ? this.pragma() : undefined;
    const name = this.expect('NAME', 'sub name');
    const params = this.params();
    const body = this.block();
    const sub: SubDef = { kind: 'sub', name: name.text, namePos: name.pos, params, body, pos };
    if (pragma) sub.pragma = pragma;
    return sub;
  }

  /** `type` of a parameter: int | real | string | name | value | value& */
  private paramType(): { type: ParamType; ref: boolean; pos: number } {
    const t = this.peek();
    if (!PARAM_TYPES.has(t.type)) return this.fail('parameter type (int, real, string, name or value)');
    this.next();
    const ref = t.type === 'value' && this.accept('&') !== null;
    return { type: t.type as ParamType, ref, pos: t.pos };
  }

  /** Parameter list; on a syntax error skip to `)` so the body still gets parsed. */
  private params(): Param[] {
    const before = this.diagnostics.length;
    try {
      return this.paramList();
    } catch (e) {
      if (!(e instanceof Bail) || this.diagnostics.length === before) throw e;
      while (!this.at('EOF') && !this.atTopStart() && !this.at(')') && !this.at('{')) this.next();
      this.accept(')');
      return [];
    }
  }

  private paramList(): Param[] {
    this.expect('(');
    const params: Param[] = [];
    if (this.accept(')')) return params;
    do {
      const { type, ref, pos } = this.paramType();
      const name = this.expect('NAME', 'parameter name');
      const p: Param = { type, name: name.text, pos, namePos: name.pos };
      if (ref) p.ref = true;
      params.push(p);
    } while (this.accept(','));
    this.expect(')', `',' or ')'`);
    return params;
  }

  private importDecl(): Import {
    const pos = this.next().pos;
    const code = this.expect('NAME', 'ucode name');
    this.expect('(');
    const params: ExternParam[] = [];
    if (!this.at(')')) {
      do {
        const { type, ref, pos: ppos } = this.paramType();
        const p: ExternParam = { type, pos: ppos };
        if (ref) p.ref = true;
        const n = this.accept('NAME');
        if (n) {
          p.name = n.text;
          p.namePos = n.pos;
        }
        params.push(p);
      } while (this.accept(','));
    }
    this.expect(')', `',' or ')'`);
    let alias = code;
    if (this.accept('as')) alias = this.expect('NAME', 'alias name');
    let cuda = false, nocpu = false;
    if (this.accept(':')) {
      this.expect('CUDA');
      cuda = true;
      if (this.accept(',')) {
        this.expect('NOCPU');
        nocpu = true;
      }
    }
    this.expect(';');
    return { kind: 'import', code: code.text, codePos: code.pos, alias: alias.text, aliasPos: alias.pos, params, cuda, nocpu, pos };
  }

  /** `C++ sub NAME(params) __block(N)` or `C++ head __block(N)` */
  private foreign(): ForeignSub | ForeignHead {
    const pos = this.next().pos;
    if (this.accept('sub')) {
      const name = this.expect('NAME', 'sub name');
      const params = this.params();
      const block = this.blockRef();
      return { kind: 'foreign', name: name.text, namePos: name.pos, params, block, pos };
    }
    const name = this.expect('NAME', `'sub' or 'head'`);
    if (name.text !== 'head') this.report('LUNA-S005', `unsupported C++ block '${name.text}': only 'C++ head' and 'C++ sub' exist`, name);
    const block = this.blockRef();
    return { kind: 'head', name: name.text, block, pos };
  }

  /** `__block(N)` as left by the preprocessor for a foreign block */
  private blockRef(): number {
    this.expect('__block', `a foreign block (\${{ … $}} or \${<END} … END)`);
    this.expect('(');
    const n = this.expect('INT', 'block number');
    this.expect(')');
    const index = n.value as number;
    if (!this.pre.blocks.some((b) => b.index === index)) this.report('LUNA-S006', `no foreign block number ${index}`, n);
    return index;
  }

  /** `<< wtype (, expr (, expr)?)? >>` */
  private pragma(): Pragma {
    const pos = this.next().pos;
    const kind = this.peek();
    if (!PRAGMA_KINDS.has(kind.type)) this.fail('rush, static, static_for or unrolling');
    this.next();
    const args: Expr[] = [];
    if (this.accept(',')) {
      args.push(this.expr());
      if (this.accept(',')) args.push(this.expr());
    }
    this.expect('>>');
    return { kind: kind.text, args, pos };
  }

  // --------------------------------------------------------------------------------- blocks

  private block(): Block {
    if (!this.at('{')) {
      const stmt = this.statement();
      return { dfs: [], stmts: [stmt], rules: [], braced: false, pos: stmt.pos };
    }
    const pos = this.next().pos;
    const diagsBefore = this.diagnostics.length;
    const dfs: DfDecl[] = this.at('df') ? this.dfLine() : [];
    const stmts: Stmt[] = [];
    while (!this.at('}')) {
      if (this.at('EOF') || this.atTopStart()) {
        // keep what was parsed; the enclosing sub ends here
        this.report('LUNA-S001', `syntax error: expected '}', found ${describe(this.peek())}`);
        return { dfs, stmts, rules: [], braced: true, pos };
      }
      if (this.at('df')) {
        // keep the names (fewer follow-up "undeclared" errors) but report the misplaced line
        this.report('LUNA-S004', 'syntax error: a df line must come first in its block, and only one per block');
        dfs.push(...this.dfLine());
        continue;
      }
      const before = this.k;
      try {
        stmts.push(this.statement());
      } catch (e) {
        if (!(e instanceof Bail)) throw e;
        this.syncStatement();
        if (this.k === before && !this.at('}')) this.next();
      }
    }
    // an empty block is an error of its own unless errors inside it explain the emptiness
    if (stmts.length === 0 && this.diagnostics.length === diagsBefore) {
      this.report('LUNA-S003', 'syntax error: empty block (a braced block needs at least one statement)');
    }
    this.next(); // '}'
    const rules = this.at('@') ? this.behaviour() : [];
    return { dfs, stmts, rules, braced: true, pos };
  }

  private dfLine(): DfDecl[] {
    this.next(); // 'df'
    const dfs: DfDecl[] = [];
    do {
      const n = this.expect('NAME', 'data fragment name');
      dfs.push({ name: n.text, pos: n.pos });
    } while (this.accept(','));
    this.expect(';', `',' or ';'`);
    return dfs;
  }

  // ----------------------------------------------------------------------------- statements

  private statement(): Stmt {
    switch (this.peek().type) {
      case 'cf':
      case 'NAME':
        return this.cfStmt();
      case 'let':
        return this.letStmt();
      case 'for':
        return this.forStmt();
      case 'while':
        return this.whileStmt();
      case 'if':
        return this.ifStmt();
      default:
        return this.fail('statement');
    }
  }

  private cfStmt(): CfStmt {
    const pos = this.peek().pos;
    let label: IdExpr | undefined;
    if (this.accept('cf')) {
      label = this.id();
      this.expect(':');
    }
    const callee = this.expect('NAME', 'name of a sub or ucode');
    const args = this.argList();
    const stmt: CfStmt = { kind: 'cf', callee: callee.text, calleePos: callee.pos, args, rules: [], pos };
    if (label) stmt.label = label;
    if (this.accept('>>')) stmt.setdfs = this.argList();
    if (this.accept('-->')) stmt.deletes = this.argList();
    if (this.at('@')) stmt.rules = this.behaviour();
    this.expect(';');
    return stmt;
  }

  /** `( exprs? )` */
  private argList(): Expr[] {
    this.expect('(');
    const args: Expr[] = [];
    if (this.accept(')')) return args;
    do args.push(this.expr());
    while (this.accept(','));
    this.expect(')', `',' or ')'`);
    return args;
  }

  private letStmt(): LetStmt {
    const pos = this.next().pos;
    const bindings: LetBinding[] = [];
    do {
      const n = this.expect('NAME', 'name');
      this.expect('=');
      bindings.push({ name: n.text, value: this.expr(), pos: n.pos });
    } while (this.accept(','));
    return { kind: 'let', bindings, body: this.block(), pos };
  }

  private forStmt(): ForStmt {
    const pos = this.next().pos;
    const pragma = this.at('<<') ? this.pragma() : undefined;
    const v = this.expect('NAME', 'loop variable');
    this.expect('=');
    const first = this.expr();
    this.expect('..');
    const last = this.expr();
    const body = this.block();
    const s: ForStmt = { kind: 'for', var: v.text, varPos: v.pos, first, last, body, pos };
    if (pragma) s.pragma = pragma;
    return s;
  }

  private whileStmt(): WhileStmt {
    const pos = this.next().pos;
    const pragma = this.at('<<') ? this.pragma() : undefined;
    const cond = this.expr();
    this.expect(',');
    const v = this.expect('NAME', 'loop variable');
    this.expect('=');
    const start = this.expr();
    this.expect('..');
    this.expect('out');
    const out = this.id();
    const body = this.block();
    const s: WhileStmt = { kind: 'while', cond, var: v.text, varPos: v.pos, start, out, body, pos };
    if (pragma) s.pragma = pragma;
    return s;
  }

  private ifStmt(): IfStmt {
    const pos = this.next().pos;
    const cond = this.expr();
    return { kind: 'if', cond, body: this.block(), pos };
  }

  // ------------------------------------------------------------------------ behaviour rules

  /** `@ { bpragma+ }` */
  private behaviour(): Rule[] {
    this.next(); // '@'
    this.expect('{');
    const rules: Rule[] = [];
    if (this.at('}')) this.report('LUNA-S001', `syntax error: expected rule, found '}'`);
    while (!this.at('}')) {
      if (this.at('EOF') || this.atTopStart()) this.fail(`'}'`);
      const before = this.k;
      try {
        rules.push(this.rule());
      } catch (e) {
        if (!(e instanceof Bail)) throw e;
        while (!this.at('EOF') && !this.atTopStart() && !this.at(';') && !this.at('}')) this.next();
        this.accept(';');
        if (this.k === before && !this.at('}') && !this.at('EOF')) this.next();
      }
    }
    this.next(); // '}'
    return rules;
  }

  private rule(): Rule {
    const prop = this.expect('NAME', 'rule name');
    const pos = prop.pos;
    let r: Rule;
    if (this.accept(':')) {
      r = { kind: 'expr', property: prop.text, expr: this.expr(), pos };
    } else if (this.at(';') || this.at(',')) {
      const flags = [prop.text];
      while (this.accept(',')) flags.push(this.expect('NAME', 'flag name').text);
      r = { kind: 'flags', flags, pos };
    } else if (this.at('NAME')) {
      const id = this.id();
      if (this.accept('=')) r = { kind: 'assign', property: prop.text, id, value: this.expr(), pos };
      else if (this.accept('=>')) r = { kind: 'map', property: prop.text, id, expr: this.expr(), pos };
      else {
        const items = [id];
        while (this.accept(',')) items.push(this.id());
        r = { kind: 'enum', property: prop.text, items, pos };
      }
    } else {
      return this.fail(`':', ',', ';' or a name`);
    }
    this.expect(';');
    return r;
  }

  // ---------------------------------------------------------------------------- expressions

  /** `NAME ('[' expr ']')*` */
  private id(): IdExpr {
    const n = this.expect('NAME', 'name');
    const indices: Expr[] = [];
    while (this.accept('[')) {
      indices.push(this.expr());
      this.expect(']');
    }
    return { kind: 'id', name: n.text, indices, pos: n.pos };
  }

  /**
   * Level 1, `? :`, lowest and left-associative as in the original yacc grammar:
   * `a ? b : c ? d : e` is `(a ? b : c) ? d : e`. The middle operand is a full expression,
   * the last one stops before the next `?`. pos = the first token of the whole expression.
   */
  expr(): Expr {
    const start = this.peek().pos;
    let e = this.binary(0);
    while (this.accept('?')) {
      const then = this.expr();
      this.expect(':', `':'`);
      e = { kind: 'cond', cond: e, then, else: this.binary(0), pos: start };
    }
    return e;
  }

  private binary(level: number): Expr {
    if (level === BINARY_LEVELS.length) return this.unary();
    const ops = BINARY_LEVELS[level]!;
    let left = this.binary(level + 1);
    for (;;) {
      const t = this.peek();
      if (!(ops as readonly string[]).includes(t.type)) return left;
      this.next();
      left = { kind: 'bin', op: t.type as BinOp, left, right: this.binary(level + 1), pos: t.pos };
    }
  }

  /** unary minus applies to a base expression (so `-a*b` is `(-a)*b`) */
  private unary(): Expr {
    const t = this.accept('-');
    if (t) return { kind: 'neg', operand: this.unary(), pos: t.pos };
    return this.primary();
  }

  private primary(): Expr {
    const t = this.peek();
    switch (t.type) {
      case 'INT':
        this.next();
        return { kind: 'int', value: t.value as number, pos: t.pos };
      case 'REAL':
        this.next();
        return { kind: 'real', value: t.value as number, pos: t.pos };
      case 'STRING':
        this.next();
        return { kind: 'string', value: t.value as string, pos: t.pos };
      case 'int':
      case 'real':
      case 'string': {
        this.next();
        this.expect('(');
        const expr = this.expr();
        this.expect(')');
        return { kind: 'cast', to: t.type as 'int' | 'real' | 'string', expr, pos: t.pos };
      }
      case 'NAME':
        return this.id();
      case '(': {
        this.next();
        const e = this.expr();
        this.expect(')');
        return e;
      }
      default:
        return this.fail('expression');
    }
  }
}

/** Parse preprocessed text (LANGUAGE.md §4). Lexer and parser diagnostics, sorted by position. */
export function parse(pre: Preprocessed): { program: Program; diagnostics: Diagnostic[] } {
  const { tokens, diagnostics: lexDiags } = tokenize(pre);
  const p = new Parser(pre, tokens);
  const program = p.program();
  return { program, diagnostics: sortDiagnostics([...lexDiags, ...p.diagnostics], pre.files) };
}

/** Preprocess and parse a file; all diagnostics sorted by source position. */
export function parseFile(
  file: string,
  opts: PreprocessOptions = {},
): { pre: Preprocessed; program: Program; diagnostics: Diagnostic[] } {
  const { pre, diagnostics: ppDiags } = preprocess(file, opts);
  const { program, diagnostics } = parse(pre);
  // an unterminated string is reported by the preprocessor; the lexer would repeat it
  const same = (a: Diagnostic, b: Diagnostic): boolean =>
    a.origin?.file === b.origin?.file && a.origin?.line === b.origin?.line && a.origin?.col === b.origin?.col;
  const lex = diagnostics.filter((d) => !(d.code === 'LUNA-L003' && ppDiags.some((p) => p.code === 'LUNA-P006' && same(p, d))));
  return { pre, program, diagnostics: sortDiagnostics([...ppDiags, ...lex], pre.files) };
}

export { originOf };
