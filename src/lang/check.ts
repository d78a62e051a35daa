// Static checks of a let-free program (docs/language.md §4, §6) with positioned, coded diagnostics.
// Everything the original only reports as a Python traceback or a C++ compiler failure is a
// diagnostic here; all of a file's problems are collected, one diagnostic per mistake.
import type {
  Binary, Block, CfStmt, Expr, ExternParam, ForeignSub, IdExpr, Import, Param, ParamType, Pos, Program, Rule, Stmt, SubDef,
} from './ast.js';
import { DiagnosticSink, type Diagnostic, type Severity } from './diagnostics.js';
import { printExpr } from './let.js';
import type { Origin } from './source.js';
import { Scope, exprStart, isDf, sameExpr, type Sym } from './scope.js';
import { binChain, condChain, negChain, subExprs } from './walk.js';
import { closest } from '../core/spelling.js';
import { DYNAMIC_OPERATIONS, REARRANGE } from '../core/builtins.js';
import { checkDynamicDecl } from './dynamic.js';

/** The behaviour rules the language defines (docs/language.md §4.4, §9.1). */
const KNOWN_RULES = new Set(['weights', 'locator_cyclic', 'locator_replicating', 'request', 'req_count', 'req_unlimited', 'drop', 'delete', 'afterpush', 'wait', 'nfparam', 'stealable', 'priority', 'heavy']);

export interface CheckOptions {
  originOf: (pos: number) => Origin;
  /** names exported by the program's TypeScript ucode module (enables E015/E016/W004) */
  ucodeExports?: ReadonlySet<string>;
  /**
   * The program has no ucode module; this is where it was looked for. Instead of one E015/E016
   * per import, a single E026 says so (when anything would need it).
   */
  ucodeModuleMissing?: string;
}

/** Static types of §6: a DF reference is a dynamic 'value'; 'error' silences follow-up errors. */
type Ty = 'int' | 'real' | 'string' | 'value' | 'error';

/** normal: nfparams are not visible; locator: inside a locator rule (nfparams allowed). */
type Mode = 'normal' | 'locator';

interface Callee {
  kind: 'sub' | 'import' | 'foreign';
  name: string;
  params: (Param | ExternParam)[];
  /** hidden int params declared by `nfparam n;` in a sub's behaviour */
  nfparams: Set<string>;
  pos: Pos;
  /** a global operation of dynamic arrays the runtime provides (its first argument is the array) */
  builtin?: boolean;
}

const OUTPUT_ENUMS = new Set(['request', 'req_unlimited', 'drop', 'delete', 'wait']);

/**
 * What an argument of each parameter kind must be (§6.5): a DF reference (`name`, and `block`:
 * the DF holding the block), an input (a DF or an expression over DFs), a number, a string.
 */
const ARG_RULE: Record<ParamType, 'ref' | 'input' | 'number' | 'string'> = {
  int: 'number', real: 'number', string: 'string', value: 'input', name: 'ref', block: 'ref',
};

interface PendingLocator { target: Sym | string; count: number; pos: Pos }

export function check(program: Program, opts: CheckOptions): Diagnostic[] {
  const c = new Checker(program, opts);
  c.run();
  return c.result();
}

class Checker {
  private readonly sink = new DiagnosticSink();
  private readonly seen = new Set<string>();
  private readonly callees = new Map<string, Callee>();
  private readonly usedCallees = new Set<string>();
  // per sub
  private labels = new Map<string, Set<number>>();
  private pending: PendingLocator[] = [];

  constructor(private readonly program: Program, private readonly opts: CheckOptions) {}

  /** One diagnostic per mistake: a let value substituted N times yields N identical reports. */
  report(severity: Severity, code: string, message: string, pos?: Pos): void {
    const key = `${code}|${pos ?? ''}|${message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const d: Diagnostic = { severity, code, message };
    if (pos !== undefined) d.origin = this.opts.originOf(pos);
    this.sink.push(d);
  }

  private err(code: string, message: string, pos?: Pos): void { this.report('error', code, message, pos); }

  result(): Diagnostic[] {
    return this.sink.result();
  }

  private where(pos: Pos): string {
    const o = this.opts.originOf(pos);
    return `${o.file}:${o.line}:${o.col}`;
  }

  run(): void {
    this.collectCallees();
    const subs = this.program.items.filter((i): i is SubDef => i.kind === 'sub');
    const main = subs.filter((s) => s.name === 'main').pop(); // the later definition wins
    if (!main) this.err('LUNA-E001', "the program has no 'main' sub");
    for (const p of main?.params ?? []) {
      if (p.type !== 'int' && p.type !== 'real' && p.type !== 'string') {
        this.err('LUNA-E017', `parameter '${p.name}' of main is '${p.type}'; main takes only int, real and string (from the command line)`, p.pos);
      }
    }
    for (const s of subs) this.sub(s);
    this.toplevelForeign();
  }

  // ------------------------------------------------------------------------------ top level

  private collectCallees(): void {
    for (const item of this.program.items) {
      let callee: Callee;
      if (item.kind === 'sub') {
        const nf = item.body.rules.flatMap((r) => (r.kind === 'enum' && r.property === 'nfparam' ? r.items.map((i) => i.name) : []));
        callee = { kind: 'sub', name: item.name, params: item.params, nfparams: new Set(nf), pos: item.namePos };
      } else if (item.kind === 'foreign') {
        callee = { kind: 'foreign', name: item.name, params: item.params, nfparams: new Set(), pos: item.namePos };
      } else if (item.kind === 'import') {
        callee = { kind: 'import', name: item.alias, params: item.params, nfparams: new Set(), pos: item.aliasPos };
      } else continue;
      const prev = this.callees.get(callee.name);
      if (prev) {
        this.report('warning', 'LUNA-W002', `duplicate definition of '${callee.name}' (previous at ${this.where(prev.pos)}); this later one wins`, callee.pos);
      }
      this.callees.set(callee.name, callee);
    }
    // the dynamic arrays' operations, unless the program defines the name itself
    for (const [name, op] of DYNAMIC_OPERATIONS) {
      if (!this.callees.has(name)) this.callees.set(name, { kind: 'import', name, params: op.written.map((type) => ({ type, pos: -1 })), nfparams: new Set(), pos: -1, builtin: true });
    }
  }

  private toplevelForeign(): void {
    if (this.opts.ucodeModuleMissing !== undefined) return this.noUcodeModule(this.opts.ucodeModuleMissing);
    const exp = this.opts.ucodeExports;
    // inline C++ subs are implemented by their own bodies (compiled with the C++ heads by the
    // loader, src/ucode/cpp/inline.ts), or by a TypeScript export of the same name
    for (const item of this.program.items) {
      if (item.kind === 'import' && exp && !exp.has(item.code)) this.missingExport(item);
    }
  }

  /** No ucode module at all: one error if any ucode would be called, at the first such import. */
  private noUcodeModule(where: string): void {
    const needed = this.program.items.filter((item): item is Import => item.kind === 'import' && this.isCalledImport(item));
    if (needed.length === 0) return;
    const names = needed.map((i) => i.code);
    const shown = names.length > 5 ? `${names.slice(0, 5).join(', ')}, … (${names.length} in all)` : names.join(', ');
    this.err('LUNA-E026', `no ucode module: the program needs ${shown}, but ${where} does not exist (write it, or give the modules with --ucodes)`, needed[0]!.codePos);
  }

  private isCalledImport(item: Import): boolean {
    return this.usedCallees.has(item.alias) && this.callees.get(item.alias)?.pos === item.aliasPos;
  }

  /** Unused imports are harmless in LuNA (§4.3), so a missing export is only fatal when called. */
  private missingExport(item: Import): void {
    const msg = `import '${item.code}' has no implementation: export function ${item.code} from the ucode module`;
    if (this.isCalledImport(item)) this.err('LUNA-E015', msg, item.codePos);
    else this.report('warning', 'LUNA-W004', `${msg} (unused, so harmless)`, item.codePos);
  }

  // ----------------------------------------------------------------------------------- subs

  private sub(s: SubDef): void {
    this.labels = new Map();
    this.pending = [];
    const scope = new Scope();
    for (const p of s.params) {
      if (scope.declare(p.name, 'param', p.type, p.pos)) this.err('LUNA-E024', `duplicate parameter '${p.name}'`, p.pos);
    }
    const nfScope = new Scope(scope);
    for (const n of this.callees.get(s.name)?.nfparams ?? []) nfScope.declare(n, 'nfparam', 'int', s.pos);
    this.block(s.body, nfScope);
    this.checkLocators();
  }

  /**
   * A block. Its map rules (`locator_cyclic x[i] => …`) describe the block and see its dfs;
   * its other rules belong to the construct that owns the block and are checked in
   * `constructScope`: the sub's block for a sub, the loop's scope (with the loop variable) for
   * each iteration of a for/while, the enclosing scope for an if.
   */
  private block(b: Block, outer: Scope, constructScope?: Scope): void {
    const scope = new Scope(outer);
    for (const d of b.dfs) {
      const prev = scope.declare(d.name, 'df', 'name', d.pos);
      if (prev && (d.dynamic || prev.dynamic)) this.err('LUNA-E028', `'${d.name}' is declared twice in this block (previous at ${this.where(prev.pos)}); a dynamic array needs a name of its own`, d.pos);
      else if (prev) this.report('warning', 'LUNA-W002', `duplicate declaration of df '${d.name}' (previous at ${this.where(prev.pos)})`, d.pos);
      if (d.dynamic) scope.lookup(d.name)!.dynamic = true;
    }
    // a declaration's element size and recommendations see the block's names
    for (const d of b.dfs) if (d.dynamic) checkDynamicDecl(d, d.dynamic, { err: (code, m, pos) => this.err(code, m, pos), type: (e) => this.expr(e, scope) });
    for (const s of b.stmts) this.stmt(s, scope);
    this.heavyRule(b.rules, undefined);
    this.rules(b.rules, scope, constructScope ?? scope);
  }

  private stmt(s: Stmt, scope: Scope): void {
    switch (s.kind) {
      case 'cf': return this.cf(s, scope);
      case 'let': throw new Error('check() expects a let-free program: run substituteLet first');
      case 'if':
        this.expr(s.cond, scope);
        return this.block(s.body, scope, scope);
      case 'for': {
        for (const a of s.pragma?.args ?? []) this.expr(a, scope);
        this.number(s.first, scope, 'a for bound');
        this.number(s.last, scope, 'a for bound');
        const inner = new Scope(scope);
        inner.declare(s.var, 'loop', 'int', s.varPos);
        return this.block(s.body, inner, inner);
      }
      case 'while': {
        for (const a of s.pragma?.args ?? []) this.expr(a, scope);
        this.number(s.start, scope, 'a while start');
        this.dfTarget(s.out, scope, 'LUNA-E020', "the 'out' target of while", false);
        const inner = new Scope(scope);
        inner.declare(s.var, 'loop', 'int', s.varPos);
        this.expr(s.cond, inner);
        return this.block(s.body, inner, inner);
      }
    }
  }

  // ----------------------------------------------------------------------------------- calls

  private cf(s: CfStmt, scope: Scope): void {
    if (s.label) {
      for (const i of s.label.indices) this.expr(i, scope);
      const counts = this.labels.get(s.label.name) ?? new Set<number>();
      this.labels.set(s.label.name, counts.add(s.label.indices.length));
    }
    const callee = this.callees.get(s.callee);
    if (!callee) this.err('LUNA-E003', `unknown sub or import '${s.callee}'`, s.calleePos);
    else {
      this.usedCallees.add(s.callee);
      if (callee.params.length !== s.args.length) {
        const what = callee.kind === 'sub' ? 'sub' : 'import';
        this.err('LUNA-E004', `${what} '${s.callee}' takes ${callee.params.length} argument(s), ${s.args.length} given`, s.calleePos);
      }
    }
    const outputs: Expr[] = [];
    const blocks: Expr[] = [];
    s.args.forEach((a, i) => {
      const p = callee?.params[i];
      if (!p) { this.expr(a, scope); return; }
      if (i === 0 && callee!.builtin) return this.arrayArg(a, scope, callee!.name);
      this.arg(a, p.type, scope, callee!, i);
      if (callee!.kind === 'sub') return;
      if (p.type === 'name') outputs.push(a);
      else if (p.type === 'block') {
        if (blocks.some((b) => sameExpr(b, a))) this.err('LUNA-E027', `the same block is passed to '${s.callee}' twice: the CF would wait for itself to release it`, exprStart(a));
        blocks.push(a);
      }
    });
    for (const e of s.setdfs ?? []) { this.dfTarget(e, scope, 'LUNA-E019', "a '>>' target", false); outputs.push(e); }
    for (const e of s.deletes ?? []) this.dfTarget(e, scope, 'LUNA-E019', "a '-->' target", false);
    // bucketed by printed form, so a call with many outputs is not quadratic
    const byText = new Map<string, Expr[]>();
    for (const o of outputs) {
      const key = printExpr(o);
      const same = byText.get(key);
      if (same?.some((p) => sameExpr(p, o))) this.err('LUNA-E014', `the same DF is an output of this call twice`, exprStart(o));
      if (same) same.push(o);
      else byText.set(key, [o]);
    }
    for (const r of s.rules) {
      if (r.kind === 'map' && r.property === 'nfparam') {
        if (callee && !callee.nfparams.has(r.id.name)) {
          this.err('LUNA-E013', `'${s.callee}' declares no nfparam '${r.id.name}'`, r.id.pos);
        }
        this.expr(r.expr, scope, 'locator');
      }
    }
    this.weightsRule(s, scope, callee);
    this.heavyRule(s.rules, callee, s.callee);
    this.rules(s.rules, scope, scope);
  }

  /**
   * `@ { heavy; }` (§4.4): the CF's ucode runs long, so on one node the workers boot at the
   * program's start. LUNA-E033 for the rule in another form than the flag, on a call of a sub
   * or of the runtime's operations, or on a block (`callee` undefined): it marks one CF that runs a ucode.
   */
  private heavyRule(rules: Rule[], callee: Callee | undefined, name?: string): void {
    for (const r of rules) {
      const named = r.kind === 'flags' ? r.flags.includes('heavy') : r.property === 'heavy';
      if (!named) continue;
      if (name === undefined) this.err('LUNA-E033', `'heavy' marks one fragment that runs a ucode: write it on that 'cf' statement, not on a block`, r.pos);
      else if (r.kind !== 'flags') this.err('LUNA-E033', `'heavy' is a flag and takes nothing: write 'heavy;'`, r.pos);
      else if (callee && (callee.kind === 'sub' || callee.builtin)) this.err('LUNA-E033', `'heavy' marks a fragment that runs a ucode; '${name}' is ${callee.builtin ? 'an operation of the runtime' : 'a sub'} (mark the calls of ucodes inside it)`, r.pos);
    }
  }

  /**
   * `@ { weights: W; }`: the shares of a rearrangement in proportion to the numbers W holds
   * (§9.11). LUNA-E032 for the rule anywhere but on the runtime's `rearrange`, in another form
   * than `weights: DF;`, twice, or naming something that is not a DF holding numbers.
   */
  private weightsRule(s: CfStmt, scope: Scope, callee: Callee | undefined): void {
    let seen = false;
    for (const r of s.rules) {
      const named = r.kind === 'flags' ? r.flags.includes('weights') : r.property === 'weights';
      if (!named) continue;
      if (!callee?.builtin || callee.name !== REARRANGE.alias) {
        this.err('LUNA-E032', `'weights' is a recommendation of the runtime's 'rearrange' (its shares in proportion); '${s.callee}' takes none`, r.pos);
        continue;
      }
      if (r.kind !== 'expr') { this.err('LUNA-E032', `'weights' names the DF holding the weights, one positive number per node: write 'weights: W;'`, r.pos); continue; }
      if (seen) { this.err('LUNA-E032', `'weights' is given twice for one rearrangement`, r.pos); continue; }
      seen = true;
      const e = r.expr;
      const sym = e.kind === 'id' ? this.ref(e, scope, 'normal') : (this.expr(e, scope), undefined);
      if (e.kind === 'id' && sym === undefined) continue; // E002 already
      if (e.kind === 'id' && isDf(sym!) && !sym!.dynamic) continue;
      const what = e.kind !== 'id' ? 'an expression' : sym!.dynamic ? `'${e.name}', a dynamic array` : `'${e.name}', a plain ${sym!.type}`;
      this.err('LUNA-E032', `the weights of 'rearrange' are a DF holding one positive number per node (set by a ucode), not ${what}`, exprStart(e));
    }
  }

  /** The array a global operation of dynamic arrays acts on: a `dynamic` name, or a DF parameter that may hold one. */
  private arrayArg(a: Expr, scope: Scope, op: string): void {
    const sym = a.kind === 'id' ? this.ref(a, scope, 'normal') : (this.expr(a, scope), undefined);
    if (a.kind === 'id' && sym === undefined) return; // E002 already
    if (sym?.dynamic || (sym?.kind === 'param' && isDf(sym) && a.kind === 'id' && a.indices.length === 0)) return;
    const what = a.kind !== 'id' ? 'an expression' : sym!.kind === 'df' ? `'${a.name}', a df of a df line` : isDf(sym!) ? `an element of '${a.name}'` : `'${a.name}', a plain ${sym!.type}`;
    this.err('LUNA-E029', `'${op}' acts on a dynamic array: its first argument must be a name declared by 'dynamic' (or a DF parameter holding one), not ${what}`, exprStart(a));
  }

  private arg(a: Expr, type: ParamType, scope: Scope, callee: Callee, i: number): void {
    const which = `argument ${i + 1} of '${callee.name}'`;
    const rule = ARG_RULE[type];
    // `P[j]` to an import's block parameter: block j of the array on the CF's node
    if (type === 'block' && callee.kind !== 'sub' && a.kind === 'id' && a.indices.length > 0 && scope.lookup(a.name)?.dynamic) { this.blockIndex(a, scope); return; }
    if (rule === 'ref') {
      const sym = a.kind === 'id' ? this.ref(a, scope, 'normal') : (this.expr(a, scope), undefined);
      if (a.kind !== 'id' || (sym && !isDf(sym))) {
        const what = type === 'block' ? 'the DF that holds the block' : 'a DF reference';
        this.err('LUNA-E006', `${which} is a '${type}' parameter: it needs ${what}, not an expression`, exprStart(a));
      } else if (sym && callee.kind === 'sub') {
        sym.aliasMin = Math.min(sym.aliasMin, a.indices.length);
      } else if (sym?.dynamic && type === 'name') {
        this.err('LUNA-E031', `'${a.name}' is a dynamic array, set by its declaration: it cannot be an output of '${callee.name}' (pass it as a block or value parameter)`, a.pos);
      }
      return;
    }
    // a dynamic array passed whole to a value parameter: the ucode gets its handle (rearrange, count)
    if (rule === 'input' && a.kind === 'id' && scope.lookup(a.name)?.dynamic) { this.ref(a, scope, 'normal'); return; }
    const t = this.expr(a, scope);
    if (rule === 'input' && t === 'int' && !this.mentionsDf(a, scope)) {
      this.err('LUNA-E007', `${which} is a 'value' parameter: it needs a DF or an expression over DFs, not a plain int`, exprStart(a));
    } else if (rule === 'number' && t === 'string') {
      this.err('LUNA-E011', `${which} is '${type}' but a string is given`, exprStart(a));
    } else if (rule === 'string' && t === 'real') {
      this.err('LUNA-E010', `a real cannot be used as a string (${which})`, exprStart(a));
    }
  }

  /** `P[j]` given to a block parameter: one int index, not a negative literal (language.md §9.11). */
  private blockIndex(a: IdExpr, scope: Scope): void {
    if (a.indices.length > 1) { this.err('LUNA-E030', `'${a.name}[…]' names one block of dynamic array '${a.name}' on the CF's node: it takes one index, not ${a.indices.length}`, a.pos); return; }
    const j = a.indices[0]!;
    const t = this.expr(j, scope);
    if (t === 'real' || t === 'string') this.err('LUNA-E030', `the block of dynamic array '${a.name}' is named by an int (0 ≤ j < its blocks a node), not a ${t}`, exprStart(j));
    else if ((j.kind === 'neg' && j.operand.kind === 'int' && j.operand.value > 0)) this.err('LUNA-E030', `block -${j.operand.value} of dynamic array '${a.name}': blocks are numbered from 0`, j.pos);
  }

  /**
   * An expression that must be a DF reference (`>>`, `-->`, rule items, while out); a dynamic
   * array only where `dynamicOk` (it is set by its declaration and lives as long as the run).
   */
  private dfTarget(e: Expr, scope: Scope, code: string, what: string, dynamicOk: boolean): void {
    const sym = e.kind === 'id' ? this.ref(e, scope, 'normal') : (this.expr(e, scope), undefined);
    if (e.kind !== 'id' || (sym && !isDf(sym))) this.err(code, `${what} must be a DF`, exprStart(e));
    else if (sym?.dynamic && !dynamicOk) this.err('LUNA-E031', `'${e.name}' is a dynamic array, set by its declaration: it cannot be ${what} (it is neither set again nor destroyed)`, e.pos);
  }

  private number(e: Expr, scope: Scope, what: string): void {
    if (this.expr(e, scope) === 'string') this.err('LUNA-E011', `${what} must be a number, not a string`, exprStart(e));
  }

  // ----------------------------------------------------------------------------------- rules

  /** Rules: map rules in `scope` (the block's), the others in `own` (see block()). */
  private rules(rules: Rule[], scope: Scope, own: Scope): void {
    for (const r of rules) {
      // unknown rules are ignored, as in the original; a near-miss of a known one is a typo
      const near = r.kind === 'flags' ? undefined : KNOWN_RULES.has(r.property) ? undefined : closest(r.property, KNOWN_RULES);
      if (near) this.report('warning', 'LUNA-W005', `unknown rule '${(r as { property: string }).property}' is ignored: did you mean '${near}'?`, r.pos);
      switch (r.kind) {
        case 'flags': break;
        case 'expr':
          if (r.property === 'locator_cyclic') this.expr(r.expr, own, 'locator');
          else if (r.property === 'priority' && this.expr(r.expr, own) === 'string') {
            this.err('LUNA-E011', "'priority' must be a number, not a string", exprStart(r.expr));
          }
          break;
        case 'enum':
          if (OUTPUT_ENUMS.has(r.property)) for (const i of r.items) this.dfTarget(i, own, 'LUNA-E019', `an item of '${r.property}'`, r.property === 'request');
          break;
        case 'assign':
          if (r.property === 'req_count') {
            this.dfTarget(r.id, own, 'LUNA-E019', "the target of 'req_count'", false);
            this.expr(r.value, own);
          }
          break;
        case 'map':
          if (r.property === 'locator_cyclic' || r.property === 'locator_replicating') this.locatorMap(r.id, r.expr, r.property, scope);
          else if (r.property === 'afterpush') this.dfTarget(r.id, scope, 'LUNA-E019', "the source of 'afterpush'", false);
          break;
      }
    }
  }

  /** `locator_cyclic X[i][j] => e`: plain-name indices bind ints for `e`; X is a DF or a label. */
  private locatorMap(id: IdExpr, e: Expr, property: string, scope: Scope): void {
    const inner = new Scope(scope);
    for (const i of id.indices) {
      if (i.kind === 'id' && i.indices.length === 0) inner.declare(i.name, 'binder', 'int', i.pos);
      else this.expr(i, scope);
    }
    if (!(property === 'locator_replicating' && e.kind === 'id' && e.name === 'all')) this.expr(e, inner, 'locator');
    const sym = scope.lookup(id.name);
    if (sym && !isDf(sym)) this.err('LUNA-E019', `the target of '${property}' must be a DF or a CF label`, id.pos);
    else this.pending.push({ target: sym ?? id.name, count: id.indices.length, pos: id.pos });
  }

  /** Run at the end of a sub, when every use of its DFs and labels has been seen. */
  private checkLocators(): void {
    for (const p of this.pending) {
      if (typeof p.target === 'string') {
        const counts = this.labels.get(p.target);
        if (!counts) this.err('LUNA-E002', `undeclared name '${p.target}' (neither a DF nor a CF label here)`, p.pos);
        else if (!counts.has(p.count)) this.mismatch(p, p.target, [...counts]);
        continue;
      }
      const { counts, aliasMin } = p.target;
      // a reference with fewer indices passed to a sub as a name may get the rest inside it
      if (counts.size > 0 && !counts.has(p.count) && !(aliasMin < p.count)) {
        this.mismatch(p, p.target.name, [...counts]);
      }
    }
  }

  private mismatch(p: PendingLocator, name: string, counts: number[]): void {
    const used = [...new Set(counts)].sort().join(' or ');
    this.err('LUNA-E018', `locator rule for '${name}' has ${p.count} index(es), but '${name}' is used with ${used}`, p.pos);
  }

  // ------------------------------------------------------------------------------ expressions

  /** Resolves a (possibly indexed) name, checking its indices; undefined when undeclared. */
  private ref(e: IdExpr, scope: Scope, mode: Mode): Sym | undefined {
    for (const i of e.indices) {
      if (this.expr(i, scope, mode) === 'string') this.err('LUNA-E011', 'an index must be a number, not a string', exprStart(i));
    }
    const sym = scope.lookup(e.name);
    if (!sym) { this.err('LUNA-E002', `undeclared name '${e.name}'`, e.pos); return undefined; }
    if (sym.kind === 'nfparam' && mode !== 'locator') {
      this.err('LUNA-E012', `nfparam '${e.name}' can only be used in locator expressions, not as an argument or value`, e.pos);
    }
    if (sym.dynamic && e.indices.length > 0) this.err('LUNA-E030', `'${e.name}' is a dynamic array, one array over the nodes, not a family of DFs: it takes no index (but '${e.name}[j]' as an import's block argument: its node's block j)`, e.pos);
    if (isDf(sym)) sym.counts.add(e.indices.length);
    else if (e.indices.length > 0) this.err('LUNA-E023', `'${e.name}' is not a DF and cannot be indexed`, e.pos);
    return sym;
  }

  private mentionsDf(e: Expr, scope: Scope): boolean {
    for (const x of subExprs(e)) {
      if (x.kind !== 'id') continue;
      const s = scope.lookup(x.name);
      if (s !== undefined && isDf(s)) return true;
    }
    return false;
  }

  /** Static type of `e`; chains (`a + b + …`, `?:` conditions, minuses) are taken in a loop. */
  private expr(e: Expr, scope: Scope, mode: Mode = 'normal'): Ty {
    switch (e.kind) {
      case 'int': case 'real': case 'string': return e.kind;
      case 'id': {
        const sym = this.ref(e, scope, mode);
        if (!sym) return 'error';
        if (sym.dynamic) {
          this.err('LUNA-E031', `'${e.name}' is a dynamic array: it has no value to compute with (pass it whole to a block or value parameter, or ask global_count)`, e.pos);
          return 'error';
        }
        if (isDf(sym)) return 'value';
        if (e.indices.length > 0) return 'error'; // E023 already reported
        return sym.type === 'real' || sym.type === 'string' ? sym.type : 'int';
      }
      case 'cast': {
        const t = this.expr(e.expr, scope, mode);
        if (e.to === 'string') { this.err('LUNA-E009', 'string() casts are not implemented in LuNA', e.pos); return 'error'; }
        if (e.to === 'real' && e.expr.kind === 'id' && scope.lookup(e.expr.name)?.kind === 'loop') {
          this.err('LUNA-E008', `real() of the int loop variable '${e.expr.name}' is not supported by LuNA; write it as ${e.expr.name} * 1.0`, e.pos);
        }
        if (t === 'string') this.err('LUNA-E011', `${e.to}() of a string`, e.pos);
        return e.to;
      }
      case 'neg': {
        const { operand, innermost } = negChain(e);
        const t = this.expr(operand, scope, mode);
        if (t === 'string') { this.err('LUNA-E005', 'invalid operation on strings: -', innermost.pos); return 'error'; }
        return t;
      }
      case 'bin': {
        const { first, links } = binChain(e);
        let l = this.expr(first, scope, mode);
        for (const b of links) l = this.binType(b, l, this.expr(b.right, scope, mode));
        return l;
      }
      case 'cond': {
        const { first, links } = condChain(e);
        let t = this.expr(first, scope, mode);
        for (const c of links) {
          const a = this.expr(c.then, scope, mode);
          const b = this.expr(c.else, scope, mode);
          if (a === 'error' || b === 'error') t = 'error';
          else if (a === b) t = a;
          else if (a === 'string' || b === 'string') t = 'string';
          else t = a === 'real' || b === 'real' ? 'real' : 'int';
        }
        return t;
      }
    }
  }

  /** Type of `l op r` given the operand types (errors reported at the operator). */
  private binType(e: Binary, l: Ty, r: Ty): Ty {
    if (l === 'error' || r === 'error') return 'error';
    if (l === 'string' || r === 'string') {
      if (e.op === '==' || e.op === '!=') return 'int';
      if (e.op !== '+') { this.err('LUNA-E005', `invalid operation on strings: ${e.op}`, e.pos); return 'error'; }
      if (l === 'real' || r === 'real') this.err('LUNA-E010', 'a real cannot be used as a string', exprStart(l === 'real' ? e.left : e.right));
      return 'string';
    }
    if (COMPARISONS.has(e.op)) return l === 'value' && r === 'value' ? 'value' : 'int';
    if (l === 'value' && r === 'value') return 'value';
    return l === 'real' || r === 'real' ? 'real' : 'int';
  }
}

const COMPARISONS = new Set(['<', '>', '<=', '>=', '==', '!=', '&&', '||']);
