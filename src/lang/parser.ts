// LuNA parser (docs/language.md §4.1–§4.2): hand-written recursive descent over the token list, with
// error recovery so every syntax error of a file is reported in one run.
//
// Diagnostic codes:
//   LUNA-S001  syntax error: expected X, found Y
//   LUNA-S002  syntax error: a reserved word (`else`, `in`, `SIZE`) where the grammar has none
//   LUNA-S003  empty braced block (`{}` — a block needs at least one statement)
//   LUNA-S004  `df` line not first in its block, or a second `df` line
//   LUNA-S005  `C++ NAME __block(N)` with NAME other than `head`
//   LUNA-S006  `__block(N)` refers to a foreign block that does not exist
//   LUNA-S007  nesting too deep (more than MAX_NESTING levels of blocks and sub-expressions)
//   LUNA-P020  (parseFile) the preprocessed text would need more memory than the heap has left
//
// Recovery: an error throws `Bail` to the nearest construct that can resynchronise — a
// behaviour rule (skip to `;`/`}`), a statement (skip to `;` or past a balanced `{…}`), a
// top-level item (skip to the next `sub`/`import`/`C++`). Only one error per token offset is
// reported, so nested constructs giving up at the same place do not repeat themselves.
//
// Depth: chains of one level (`a + b - c …`, `- - x`, argument and statement lists) are parsed
// with loops, never recursion per element. Nesting (blocks, parentheses, indices, casts, `?:`
// branches, operators waiting for their right operand) is counted, and a program nested more
// than MAX_NESTING levels gets LUNA-S007 there: every later stage (let substitution, checks,
// the compiler, the run-time evaluation of expressions) recurses at most that deep.
import type {
  Block, CfStmt, DfDecl, Expr, ExternParam, ForStmt, IdExpr, IfStmt, Import, LetBinding, LetStmt,
  Param, ParamType, Pragma, Program, Rule, Stmt, SubDef, TopLevel, WhileStmt, BinOp, ForeignHead,
  ForeignSub,
} from './ast.js';
import { DiagnosticSink, limitDiagnostics, type Diagnostic } from './diagnostics.js';
import type { Preprocessed } from './source.js';
import { KEYWORDS, lex, RESERVED, tokenAt, TOKEN_TYPES, type Token, type TokenTable } from './lexer.js';
import { error, originOf } from './origin.js';
import { fits, HeapExhausted, heapLeft, HeapGuard, megabytes } from './heap.js';
import { preprocess, type PreprocessOptions } from './preprocess.js';

/** Deepest nesting of blocks and sub-expressions a program may have (LUNA-S007 beyond). */
export const MAX_NESTING = 256;

/**
 * Most lists of a program are empty (indices of a name, rules of a call, dfs of a block): they
 * all share this frozen array, which saves an allocation per node of a large program (and
 * throws if anything tried to fill it).
 */
const NONE: never[] = Object.freeze([]) as unknown as never[];
const orNone = <T>(xs: T[]): T[] => (xs.length === 0 ? NONE : xs);

/** Unwinds to a recovery point; the diagnostic has already been recorded. */
class Bail extends Error {}

/** Parameter kinds that are keywords (`block` is a word only in parameter lists, see paramType). */
const PARAM_KEYWORDS = new Set<string>(['int', 'real', 'string', 'name', 'value']);
const PRAGMA_KINDS = new Set(['rush', 'static', 'static_for', 'unrolling']);
const TOP_START = new Set(['sub', 'import', 'C++']);

/** Binary precedence, loosest 1 to tightest 5 (all left-associative); `? :` sits above them. */
const PRECEDENCE: Readonly<Record<string, number>> = {
  '||': 1, '&&': 2, '<': 3, '>': 3, '<=': 3, '>=': 3, '==': 3, '!=': 3, '+': 4, '-': 4, '*': 5, '/': 5, '%': 5,
};

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
  readonly sink = new DiagnosticSink();
  /** token offsets that already carry an error */
  private readonly reported = new Set<number>();
  /** the Token object of index cachedK (peek() is called often at the same place) */
  private cachedK = -1;
  private cached: Token | null = null;
  /** one string per distinct name, shared by every node that uses it */
  private readonly names = new Map<string, string>();
  /** stops a program whose tree outgrows the heap that memoryShortfall estimated it needs */
  private readonly heap = new HeapGuard();

  constructor(
    private readonly pre: Preprocessed,
    private readonly toks: TokenTable,
  ) {}

  // ---------------------------------------------------------------------------- token access

  private index(o = 0): number {
    return Math.min(this.k + o, this.toks.count - 1);
  }

  /** Type of the token o places ahead. */
  private type(o = 0): string {
    return TOKEN_TYPES[this.toks.types[this.index(o)]!]!;
  }

  private peek(o = 0): Token {
    const i = this.index(o);
    if (i !== this.cachedK) {
      const t = tokenAt(this.toks, i);
      if (t.type === 'NAME') {
        const known = this.names.get(t.text);
        if (known === undefined) this.names.set(t.text, t.text);
        else t.text = known;
      }
      this.cached = t;
      this.cachedK = i;
    }
    return this.cached!;
  }

  private at(type: string): boolean {
    return this.type() === type;
  }

  private next(): Token {
    const t = this.peek();
    if (t.type !== 'EOF') this.k++;
    return t;
  }

  /** Move past the current token (its object is not needed). */
  private skip(): void {
    if (this.k < this.toks.count - 1) this.k++;
  }

  private accept(type: string): Token | null {
    return this.at(type) ? this.next() : null;
  }

  private expect(type: string, what = `'${type}'`): Token {
    if (this.at(type)) return this.next();
    if (type === 'NAME') {
      // a keyword where a name goes (`int out`): said once, then taken as that name so its uses
      // do not cascade into more errors
      const t = this.peek();
      if (KEYWORDS.has(t.type) && !RESERVED.has(t.type)) {
        if (!this.keywordNames.has(t.type)) {
          this.keywordNames.add(t.type);
          this.report('LUNA-S001', `syntax error: expected ${what}, found the keyword '${t.type}', which cannot be a name: rename it (e.g. '${t.type}_')`, t);
        }
        this.skip();
        return { ...t, type: 'NAME', text: t.type };
      }
    }
    return this.fail(what);
  }

  /** keywords already reported where a name goes (later uses are taken as that name) */
  private readonly keywordNames = new Set<string>();

  /** Record an error at token `t` (once per offset). */
  private report(code: string, message: string, t: Token = this.peek()): void {
    if (this.reported.has(t.pos)) return;
    this.reported.add(t.pos);
    this.sink.push(error(code, message, originOf(this.pre, t.pos)));
  }

  /** "syntax error: expected X, found Y" at the current token, then unwind. */
  private fail(expected: string, hint = ''): never {
    const t = this.peek();
    const reserved = RESERVED.has(t.type);
    if (reserved && t.type === 'else') hint ||= ' (LuNA has no else: write a second if with the negated condition)';
    this.report(reserved ? 'LUNA-S002' : 'LUNA-S001', `syntax error: expected ${expected}, found ${describe(t)}${hint}`, t);
    throw new Bail();
  }

  /** Entering nesting level `depth`: beyond MAX_NESTING, LUNA-S007 here and unwind. */
  private nest(depth: number): void {
    if (depth <= MAX_NESTING) return;
    this.report('LUNA-S007', `nesting too deep: more than ${MAX_NESTING} levels of blocks and sub-expressions`);
    throw new Bail();
  }

  // ------------------------------------------------------------------------------- recovery

  private atTopStart(): boolean {
    return TOP_START.has(this.type());
  }

  /** After a failed statement: skip to `;` or past a balanced `{…}` (and its `@{…}`). */
  private syncStatement(): void {
    let depth = 0;
    for (;;) {
      const t = this.type();
      if (t === 'EOF' || (depth === 0 && TOP_START.has(t))) return;
      if (t === '{') depth++;
      else if (t === '}') {
        if (depth === 0) return;
        if (--depth === 0) {
          this.skip();
          if (!this.at('@')) return;
          continue;
        }
      } else if (t === ';' && depth === 0) {
        this.skip();
        return;
      }
      this.skip();
    }
  }

  private syncTop(start: number): void {
    if (this.k === start) this.skip();
    while (!this.at('EOF') && !this.atTopStart()) this.skip();
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
    switch (this.type()) {
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
    const pragma = this.at('<<') ? this.pragma(1) : undefined;
    const name = this.expect('NAME', 'sub name');
    const params = this.params();
    const body = this.block(1);
    const sub: SubDef = { kind: 'sub', name: name.text, namePos: name.pos, params, body, pos };
    if (pragma) sub.pragma = pragma;
    return sub;
  }

  /**
   * `type` of a parameter: int | real | string | name | value | value& | block. `block` is a
   * word only here (no parameter list starts with a name), so programs keep it as a name.
   */
  private paramType(): { type: ParamType; ref: boolean; pos: number } {
    const t = this.peek();
    const type = PARAM_KEYWORDS.has(t.type) ? t.type : t.type === 'NAME' && t.text === 'block' ? 'block' : undefined;
    if (type === undefined) return this.fail('parameter type (int, real, string, name, value or block)');
    this.skip();
    const ref = type === 'value' && this.accept('&') !== null;
    return { type: type as ParamType, ref, pos: t.pos };
  }

  /** The contextual word `w` (lexed as a name), if it comes next. */
  private acceptWord(w: string): Token | null {
    const t = this.peek();
    if (t.type !== 'NAME' || t.text !== w) return null;
    this.skip();
    return t;
  }

  private expectWord(w: string): Token {
    return this.acceptWord(w) ?? this.fail(`'${w}'`);
  }

  /** Parameter list; on a syntax error skip to `)` so the body still gets parsed. */
  private params(): Param[] {
    const before = this.sink.total;
    try {
      return this.paramList();
    } catch (e) {
      if (!(e instanceof Bail) || this.sink.total === before) throw e;
      while (!this.at('EOF') && !this.atTopStart() && !this.at(')') && !this.at('{')) this.skip();
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
    // `: CUDA`, `: CUDA, NOCPU` (the original's, ignored), then or alone `WAITS` (luna-ts)
    let cuda = false, nocpu = false, waits = false;
    if (this.accept(':')) {
      waits = this.acceptWord('WAITS') !== null;
      if (!waits) {
        this.expect('CUDA', "'CUDA' or 'WAITS'");
        cuda = true;
        if (this.accept(',')) {
          waits = this.acceptWord('WAITS') !== null;
          if (!waits) {
            this.expect('NOCPU', "'NOCPU' or 'WAITS'");
            nocpu = true;
            if (this.accept(',')) { this.expectWord('WAITS'); waits = true; }
          }
        }
      }
    }
    this.expect(';');
    return { kind: 'import', code: code.text, codePos: code.pos, alias: alias.text, aliasPos: alias.pos, params, cuda, nocpu, waits, pos };
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
    if (!(Number.isInteger(index) && index >= 0 && index < this.pre.blocks.length && this.pre.blocks[index]!.index === index)) {
      this.report('LUNA-S006', `no foreign block number ${index}`, n);
    }
    return index;
  }

  /** `<< wtype (, expr (, expr)?)? >>` */
  private pragma(depth: number): Pragma {
    const pos = this.next().pos;
    const kind = this.peek();
    if (!PRAGMA_KINDS.has(kind.type)) this.fail('rush, static, static_for or unrolling');
    this.skip();
    const args: Expr[] = [];
    if (this.accept(',')) {
      args.push(this.expr(depth));
      if (this.accept(',')) args.push(this.expr(depth));
    }
    this.expect('>>');
    return { kind: kind.text, args, pos };
  }

  // --------------------------------------------------------------------------------- blocks

  /** A block whose statements are at nesting level `depth`. */
  private block(depth: number): Block {
    this.nest(depth);
    if (!this.at('{')) {
      const stmt = this.statement(depth);
      return { dfs: NONE, stmts: [stmt], rules: NONE, braced: false, pos: stmt.pos };
    }
    const pos = this.next().pos;
    const diagsBefore = this.sink.total;
    const dfs: DfDecl[] = this.at('df') ? this.dfLine() : [];
    const stmts: Stmt[] = [];
    while (!this.at('}')) {
      if (this.at('EOF') || this.atTopStart()) {
        // keep what was parsed; the enclosing sub ends here
        this.report('LUNA-S001', `syntax error: expected '}', found ${describe(this.peek())}`);
        return { dfs: orNone(dfs), stmts, rules: NONE, braced: true, pos };
      }
      if (this.atDynamic()) {
        try {
          dfs.push(this.dynamicDecl(depth));
        } catch (e) {
          if (!(e instanceof Bail)) throw e;
          this.syncStatement();
        }
        continue;
      }
      if (this.at('df')) {
        // keep the names (fewer follow-up "undeclared" errors) but report the misplaced line
        this.report('LUNA-S004', 'syntax error: a df line must come first in its block, and only one per block');
        for (const d of this.dfLine()) dfs.push(d);
        continue;
      }
      const before = this.k;
      try {
        stmts.push(this.statement(depth));
      } catch (e) {
        if (!(e instanceof Bail)) throw e;
        this.syncStatement();
        if (this.k === before && !this.at('}')) this.skip();
      }
    }
    // an empty block is an error of its own unless errors inside it explain the emptiness
    if (stmts.length === 0 && this.sink.total === diagsBefore) {
      this.report('LUNA-S003', 'syntax error: empty block (a braced block needs at least one statement)');
    }
    this.skip(); // '}'
    const rules = this.at('@') ? this.behaviour(depth) : NONE;
    return { dfs: orNone(dfs), stmts, rules: orNone(rules), braced: true, pos };
  }

  private dfLine(): DfDecl[] {
    this.skip(); // 'df'
    const dfs: DfDecl[] = [];
    do {
      const n = this.expect('NAME', 'data fragment name');
      dfs.push({ name: n.text, pos: n.pos });
    } while (this.accept(','));
    this.expect(';', `',' or ';'`);
    return dfs;
  }

  /**
   * `dynamic NAME (` starts a dynamic array's declaration (docs/language.md §9.11). `dynamic` is a
   * word only there: a call `dynamic(x);` or a DF named `dynamic` keep their meaning.
   */
  private atDynamic(): boolean {
    const t = this.peek();
    return t.type === 'NAME' && t.text === 'dynamic' && this.type(1) === 'NAME' && this.type(2) === '(';
  }

  /** `dynamic NAME ( expr ) behaviour? ;` */
  private dynamicDecl(depth: number): DfDecl {
    const pos = this.next().pos;
    const n = this.expect('NAME', 'dynamic array name');
    this.expect('(');
    const elsize = this.expr(depth);
    this.expect(')', `')' (a dynamic array takes its element size in bytes; the rest are recommendations: @ { ordered; capacity: n; home: k; })`);
    const rules = this.at('@') ? this.behaviour(depth) : NONE;
    this.expect(';');
    return { name: n.text, pos: n.pos, dynamic: { elsize, rules: orNone(rules), pos } };
  }

  // ----------------------------------------------------------------------------- statements

  private statement(depth: number): Stmt {
    if (this.heap.exhausted()) throw new HeapExhausted('parsing');
    switch (this.type()) {
      case 'cf':
      case 'NAME':
        return this.cfStmt(depth);
      case 'let':
        return this.letStmt(depth);
      case 'for':
        return this.forStmt(depth);
      case 'while':
        return this.whileStmt(depth);
      case 'if':
        return this.ifStmt(depth);
      default:
        return this.fail('statement');
    }
  }

  private cfStmt(depth: number): CfStmt {
    const pos = this.peek().pos;
    let label: IdExpr | undefined;
    if (this.accept('cf')) {
      label = this.id(depth);
      this.expect(':');
    }
    const callee = this.expect('NAME', 'name of a sub or ucode');
    const args = this.argList(depth);
    const stmt: CfStmt = { kind: 'cf', callee: callee.text, calleePos: callee.pos, args, rules: NONE, pos };
    if (label) stmt.label = label;
    if (this.accept('>>')) stmt.setdfs = this.argList(depth);
    if (this.accept('-->')) stmt.deletes = this.argList(depth);
    if (this.at('@')) stmt.rules = orNone(this.behaviour(depth));
    this.expect(';');
    return stmt;
  }

  /** `( exprs? )` */
  private argList(depth: number): Expr[] {
    this.expect('(');
    const args: Expr[] = [];
    if (this.accept(')')) return NONE;
    do args.push(this.expr(depth));
    while (this.accept(','));
    this.expect(')', `',' or ')'`);
    return args;
  }

  private letStmt(depth: number): LetStmt {
    const pos = this.next().pos;
    const bindings: LetBinding[] = [];
    do {
      const n = this.expect('NAME', 'name');
      this.expect('=');
      bindings.push({ name: n.text, value: this.expr(depth), pos: n.pos });
    } while (this.accept(','));
    return { kind: 'let', bindings, body: this.block(depth + 1), pos };
  }

  private forStmt(depth: number): ForStmt {
    const pos = this.next().pos;
    const pragma = this.at('<<') ? this.pragma(depth) : undefined;
    const v = this.expect('NAME', 'loop variable');
    this.expect('=');
    const first = this.expr(depth);
    this.expect('..');
    const last = this.expr(depth);
    const body = this.block(depth + 1);
    const s: ForStmt = { kind: 'for', var: v.text, varPos: v.pos, first, last, body, pos };
    if (pragma) s.pragma = pragma;
    return s;
  }

  private whileStmt(depth: number): WhileStmt {
    const pos = this.next().pos;
    const pragma = this.at('<<') ? this.pragma(depth) : undefined;
    const cond = this.expr(depth);
    this.expect(',');
    const v = this.expect('NAME', 'loop variable');
    this.expect('=');
    const start = this.expr(depth);
    this.expect('..');
    this.expect('out');
    const out = this.id(depth);
    const body = this.block(depth + 1);
    const s: WhileStmt = { kind: 'while', cond, var: v.text, varPos: v.pos, start, out, body, pos };
    if (pragma) s.pragma = pragma;
    return s;
  }

  private ifStmt(depth: number): IfStmt {
    const pos = this.next().pos;
    const cond = this.expr(depth);
    return { kind: 'if', cond, body: this.block(depth + 1), pos };
  }

  // ------------------------------------------------------------------------ behaviour rules

  /** `@ { bpragma+ }` */
  private behaviour(depth: number): Rule[] {
    this.skip(); // '@'
    this.expect('{');
    const rules: Rule[] = [];
    if (this.at('}')) this.report('LUNA-S001', `syntax error: expected rule, found '}'`);
    while (!this.at('}')) {
      if (this.at('EOF') || this.atTopStart()) this.fail(`'}'`);
      const before = this.k;
      try {
        rules.push(this.rule(depth));
      } catch (e) {
        if (!(e instanceof Bail)) throw e;
        while (!this.at('EOF') && !this.atTopStart() && !this.at(';') && !this.at('}')) this.skip();
        this.accept(';');
        if (this.k === before && !this.at('}') && !this.at('EOF')) this.skip();
      }
    }
    this.skip(); // '}'
    return rules;
  }

  private rule(depth: number): Rule {
    const prop = this.expect('NAME', 'rule name');
    const pos = prop.pos;
    let r: Rule;
    if (this.accept(':')) {
      r = { kind: 'expr', property: prop.text, expr: this.expr(depth), pos };
    } else if (this.at(';') || this.at(',')) {
      const flags = [prop.text];
      while (this.accept(',')) flags.push(this.expect('NAME', 'flag name').text);
      r = { kind: 'flags', flags, pos };
    } else if (this.at('NAME')) {
      const id = this.id(depth);
      if (this.accept('=')) r = { kind: 'assign', property: prop.text, id, value: this.expr(depth), pos };
      else if (this.accept('=>')) r = { kind: 'map', property: prop.text, id, expr: this.expr(depth), pos };
      else {
        const items = [id];
        while (this.accept(',')) items.push(this.id(depth));
        r = { kind: 'enum', property: prop.text, items, pos };
      }
    } else {
      return this.fail(`':', ',', ';' or a name`);
    }
    this.expect(';');
    return r;
  }

  // ---------------------------------------------------------------------------- expressions

  /** `NAME ('[' expr ']')*`; the indices are one level deeper. */
  private id(depth: number): IdExpr {
    const n = this.expect('NAME', 'name');
    const indices: Expr[] = [];
    while (this.at('[')) {
      this.nest(depth + 1);
      this.skip();
      indices.push(this.expr(depth + 1));
      this.expect(']');
    }
    return { kind: 'id', name: n.text, indices: orNone(indices), pos: n.pos };
  }

  /**
   * Level 1, `? :`, lowest and left-associative as in the original yacc grammar:
   * `a ? b : c ? d : e` is `(a ? b : c) ? d : e`. The middle operand is a full expression,
   * the last one stops before the next `?`. pos = the first token of the whole expression.
   * The branches are one level deeper; a chain of `?:` is a loop.
   */
  expr(depth: number): Expr {
    this.nest(depth);
    const start = this.peek().pos;
    let e = this.binary(depth);
    while (this.accept('?')) {
      const then = this.expr(depth + 1);
      this.expect(':', `':'`);
      e = { kind: 'cond', cond: e, then, else: this.binary(depth + 1), pos: start };
    }
    return e;
  }

  /**
   * Binary operators by precedence climbing with explicit stacks: a flat chain `a + b + …` is a
   * loop, whatever its length. An operand waiting under k operators of rising precedence ends
   * k levels deep in the tree (in `a + b * c`, `c` is 2 below the `+`), and is counted so.
   */
  private binary(depth: number): Expr {
    this.nest(depth);
    const operands: Expr[] = [this.unary(depth)];
    const ops: Token[] = [];
    const reduce = (): void => {
      const op = ops.pop()!;
      const right = operands.pop()!;
      const left = operands.pop()!;
      operands.push({ kind: 'bin', op: op.type as BinOp, left, right, pos: op.pos });
    };
    for (;;) {
      const p = PRECEDENCE[this.type()];
      if (p === undefined) break;
      while (ops.length > 0 && PRECEDENCE[ops[ops.length - 1]!.type]! >= p) reduce();
      ops.push(this.next());
      operands.push(this.unary(depth + ops.length));
    }
    while (ops.length > 0) reduce();
    return operands[0]!;
  }

  /** Unary minus applies to a base expression (so `-a*b` is `(-a)*b`); a chain of them is a loop. */
  private unary(depth: number): Expr {
    this.nest(depth);
    if (!this.at('-')) return this.primary(depth);
    const minus: number[] = [];
    while (this.at('-')) minus.push(this.next().pos);
    this.nest(depth + 1);
    let e = this.primary(depth + 1);
    for (let i = minus.length - 1; i >= 0; i--) e = { kind: 'neg', operand: e, pos: minus[i]! };
    return e;
  }

  private primary(depth: number): Expr {
    const t = this.peek();
    switch (t.type) {
      case 'INT':
        this.skip();
        return { kind: 'int', value: t.value as number, pos: t.pos };
      case 'REAL':
        this.skip();
        return { kind: 'real', value: t.value as number, pos: t.pos };
      case 'STRING':
        this.skip();
        return { kind: 'string', value: t.value as string, pos: t.pos };
      case 'int':
      case 'real':
      case 'string': {
        this.skip();
        this.expect('(');
        const expr = this.expr(depth + 1);
        this.expect(')');
        return { kind: 'cast', to: t.type as 'int' | 'real' | 'string', expr, pos: t.pos };
      }
      case 'NAME':
        return this.id(depth);
      case '(': {
        this.skip();
        const e = this.expr(depth + 1);
        this.expect(')');
        return e;
      }
      default:
        if (this.keywordNames.has(t.type)) return this.id(depth);
        return this.fail('expression');
    }
  }
}

/** Parse preprocessed text (docs/language.md §4.1). Lexer and parser diagnostics, sorted by position. */
export function parse(pre: Preprocessed): { program: Program; diagnostics: Diagnostic[] } {
  const { table, diagnostics: lexDiags } = lex(pre);
  const p = new Parser(pre, table);
  const program = p.program();
  return { program, diagnostics: limitDiagnostics([...lexDiags, ...p.sink.result()], pre.files) };
}

/** Preprocess and parse a file; all diagnostics sorted by source position. */
export function parseFile(
  file: string,
  opts: PreprocessOptions = {},
): { pre: Preprocessed; program: Program; diagnostics: Diagnostic[] } {
  const { pre, diagnostics: ppDiags } = preprocess(file, opts);
  // a preprocessor that stopped at its size limit leaves a truncated text: nothing to parse;
  // a text that would not fit in memory is refused rather than left to abort the process
  const tooBig = memoryShortfall(pre);
  if (tooBig) ppDiags.push(tooBig);
  const none = (): { pre: Preprocessed; program: Program; diagnostics: Diagnostic[] } => ({ pre, program: { items: [] }, diagnostics: limitDiagnostics(ppDiags, pre.files) });
  if (tooBig || ppDiags.some((d) => d.code === 'LUNA-P018')) return none();
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(pre);
  } catch (e) {
    if (!(e instanceof HeapExhausted)) throw e;
    ppDiags.push(heapExhausted(pre, e));
    return none();
  }
  const { program, diagnostics } = parsed;
  // an unterminated string is reported by the preprocessor; the lexer would repeat it
  const p006 = new Set(ppDiags.filter((p) => p.code === 'LUNA-P006').map((p) => originKey(p)));
  const lex = diagnostics.filter((d) => !(d.code === 'LUNA-L003' && p006.has(originKey(d))));
  return { pre, program, diagnostics: limitDiagnostics([...ppDiags, ...lex], pre.files) };
}

/**
 * Heap the parser and later stages need per character of preprocessed text: the least old space
 * that let the front end finish was 29–35 bytes per character on Node 20 and 24 (dense calls,
 * many small subs, the benchmark's realistic program); the rest is margin for other shapes,
 * and the parser's HeapGuard stops what still outgrows it.
 */
export const BYTES_PER_CHAR = 48;

/** LUNA-P020 when the program would need more heap than is left, else null. */
function memoryShortfall(pre: Preprocessed): Diagnostic | null {
  const need = pre.text.length * BYTES_PER_CHAR;
  const { ok, left } = fits(need);
  if (ok) return null;
  return tooLarge(pre.files[0] ?? '<input>', `${pre.text.length} characters after preprocessing need about ${megabytes(need)} MB`, left);
}

/** LUNA-P020 of a stage its HeapGuard stopped. */
export function heapExhausted(pre: Preprocessed, e: HeapExhausted): Diagnostic {
  return tooLarge(pre.files[0] ?? '<input>', `${pre.text.length} characters after preprocessing filled the heap while ${e.stage}`, heapLeft());
}

/** LUNA-P020 for the main file: what the program needs (`what`) against the heap left. */
export function tooLarge(file: string, what: string, left: number): Diagnostic {
  return error('LUNA-P020', `program too large for the memory available: ${what}, the JavaScript heap has ${megabytes(Math.max(0, left))} MB `
    + 'left (give node more: NODE_OPTIONS=--max-old-space-size=MB)', { file, line: 0, col: 0 });
}

function originKey(d: Diagnostic): string {
  return `${d.origin?.file}:${d.origin?.line}:${d.origin?.col}`;
}

export { originOf };
