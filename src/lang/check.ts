// Static checks of a let-free program (LANGUAGE.md §4, §6) with positioned, coded diagnostics.
// Everything the original only reports as a Python traceback or a C++ compiler failure is a
// diagnostic here; all of a file's problems are collected, one diagnostic per mistake.
import type {
  Block, CfStmt, Expr, ExternParam, IdExpr, Import, Param, ParamType, Pos, Program, Rule, Stmt, SubDef,
} from './ast.js';
import type { Diagnostic, Severity } from './diagnostics.js';
import type { Origin } from './source.js';
import { Scope, exprStart, isDf, sameExpr, type Sym } from './scope.js';

export interface CheckOptions {
  originOf: (pos: number) => Origin;
  /** names exported by the program's TypeScript ucode module (enables E015/E016/W004) */
  ucodeExports?: ReadonlySet<string>;
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
}

const OUTPUT_ENUMS = new Set(['request', 'req_unlimited', 'drop', 'delete', 'wait']);

interface PendingLocator { target: Sym | string; count: number; pos: Pos }

export function check(program: Program, opts: CheckOptions): Diagnostic[] {
  const c = new Checker(program, opts);
  c.run();
  return c.result();
}

class Checker {
  private readonly diags: { d: Diagnostic; pos?: Pos }[] = [];
  private readonly callees = new Map<string, Callee>();
  private readonly usedCallees = new Set<string>();
  // per sub
  private labels = new Map<string, Set<number>>();
  private pending: PendingLocator[] = [];

  constructor(private readonly program: Program, private readonly opts: CheckOptions) {}

  report(severity: Severity, code: string, message: string, pos?: Pos): void {
    const d: Diagnostic = { severity, code, message };
    if (pos !== undefined) d.origin = this.opts.originOf(pos);
    this.diags.push({ d, pos });
  }

  private err(code: string, message: string, pos?: Pos): void { this.report('error', code, message, pos); }

  /** One diagnostic per mistake: a let value substituted N times yields N identical reports. */
  result(): Diagnostic[] {
    const seen = new Set<string>();
    const out: Diagnostic[] = [];
    for (const { d, pos } of this.diags) {
      const key = `${d.code}|${pos ?? ''}|${d.message}`;
      if (!seen.has(key)) { seen.add(key); out.push(d); }
    }
    return out;
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
  }

  private toplevelForeign(): void {
    const exp = this.opts.ucodeExports;
    for (const item of this.program.items) {
      if (item.kind === 'head') {
        // other names than `head` are rejected by the parser (LUNA-S005)
        this.report('warning', 'LUNA-W001', 'C++ head block ignored: inline C++ cannot run in luna-ts', item.pos);
      } else if (item.kind === 'foreign' && exp && !exp.has(item.name)) {
        this.err('LUNA-E016', `inline C++ sub ${item.name} needs a TypeScript implementation: export function ${item.name} from the ucode module`, item.pos);
      } else if (item.kind === 'import' && exp && !exp.has(item.code)) {
        this.missingExport(item);
      }
    }
  }

  /** Unused imports are harmless in LuNA (§4.3), so a missing export is only fatal when called. */
  private missingExport(item: Import): void {
    const msg = `import '${item.code}' has no implementation: export function ${item.code} from the ucode module`;
    if (this.usedCallees.has(item.alias) && this.callees.get(item.alias)?.pos === item.aliasPos) this.err('LUNA-E015', msg, item.codePos);
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

  private block(b: Block, outer: Scope): void {
    const scope = new Scope(outer);
    for (const d of b.dfs) {
      const prev = scope.declare(d.name, 'df', 'name', d.pos);
      if (prev) this.report('warning', 'LUNA-W002', `duplicate declaration of df '${d.name}' (previous at ${this.where(prev.pos)})`, d.pos);
    }
    for (const s of b.stmts) this.stmt(s, scope);
    this.rules(b.rules, scope);
  }

  private stmt(s: Stmt, scope: Scope): void {
    switch (s.kind) {
      case 'cf': return this.cf(s, scope);
      case 'let': throw new Error('check() expects a let-free program: run substituteLet first');
      case 'if':
        this.expr(s.cond, scope);
        return this.block(s.body, scope);
      case 'for': {
        for (const a of s.pragma?.args ?? []) this.expr(a, scope);
        this.number(s.first, scope, 'a for bound');
        this.number(s.last, scope, 'a for bound');
        const inner = new Scope(scope);
        inner.declare(s.var, 'loop', 'int', s.varPos);
        return this.block(s.body, inner);
      }
      case 'while': {
        for (const a of s.pragma?.args ?? []) this.expr(a, scope);
        this.number(s.start, scope, 'a while start');
        this.dfTarget(s.out, scope, 'LUNA-E020', "the 'out' target of while");
        const inner = new Scope(scope);
        inner.declare(s.var, 'loop', 'int', s.varPos);
        this.expr(s.cond, inner);
        return this.block(s.body, inner);
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
    s.args.forEach((a, i) => {
      const p = callee?.params[i];
      if (!p) { this.expr(a, scope); return; }
      this.arg(a, p.type, scope, callee!, i);
      if (p.type === 'name' && callee!.kind !== 'sub') outputs.push(a);
    });
    for (const e of s.setdfs ?? []) { this.dfTarget(e, scope, 'LUNA-E019', "a '>>' target"); outputs.push(e); }
    for (const e of s.deletes ?? []) this.dfTarget(e, scope, 'LUNA-E019', "a '-->' target");
    outputs.forEach((o, i) => {
      if (outputs.slice(0, i).some((p) => sameExpr(p, o))) {
        this.err('LUNA-E014', `the same DF is an output of this call twice`, exprStart(o));
      }
    });
    for (const r of s.rules) {
      if (r.kind === 'map' && r.property === 'nfparam') {
        if (callee && !callee.nfparams.has(r.id.name)) {
          this.err('LUNA-E013', `'${s.callee}' declares no nfparam '${r.id.name}'`, r.id.pos);
        }
        this.expr(r.expr, scope, 'locator');
      }
    }
    this.rules(s.rules, scope);
  }

  private arg(a: Expr, type: ParamType, scope: Scope, callee: Callee, i: number): void {
    const which = `argument ${i + 1} of '${callee.name}'`;
    if (type === 'name') {
      const sym = a.kind === 'id' ? this.ref(a, scope, 'normal') : (this.expr(a, scope), undefined);
      if (a.kind !== 'id' || (sym && !isDf(sym))) {
        this.err('LUNA-E006', `${which} is a 'name' parameter: it needs a DF reference, not an expression`, exprStart(a));
      } else if (sym && callee.kind === 'sub') {
        sym.uses[sym.uses.length - 1]!.alias = true;
      }
      return;
    }
    const t = this.expr(a, scope);
    if (type === 'value' && t === 'int' && !this.mentionsDf(a, scope)) {
      this.err('LUNA-E007', `${which} is a 'value' parameter: it needs a DF or an expression over DFs, not a plain int`, exprStart(a));
    } else if ((type === 'int' || type === 'real') && t === 'string') {
      this.err('LUNA-E011', `${which} is '${type}' but a string is given`, exprStart(a));
    } else if (type === 'string' && t === 'real') {
      this.err('LUNA-E010', `a real cannot be used as a string (${which})`, exprStart(a));
    }
  }

  /** An expression that must be a DF reference (`>>`, `-->`, rule items, while out). */
  private dfTarget(e: Expr, scope: Scope, code: string, what: string): void {
    const sym = e.kind === 'id' ? this.ref(e, scope, 'normal') : (this.expr(e, scope), undefined);
    if (e.kind !== 'id' || (sym && !isDf(sym))) this.err(code, `${what} must be a DF`, exprStart(e));
  }

  private number(e: Expr, scope: Scope, what: string): void {
    if (this.expr(e, scope) === 'string') this.err('LUNA-E011', `${what} must be a number, not a string`, exprStart(e));
  }

  // ----------------------------------------------------------------------------------- rules

  private rules(rules: Rule[], scope: Scope): void {
    for (const r of rules) {
      switch (r.kind) {
        case 'flags': break;
        case 'expr':
          if (r.property === 'locator_cyclic') this.expr(r.expr, scope, 'locator');
          break;
        case 'enum':
          if (OUTPUT_ENUMS.has(r.property)) for (const i of r.items) this.dfTarget(i, scope, 'LUNA-E019', `an item of '${r.property}'`);
          break;
        case 'assign':
          if (r.property === 'req_count') {
            this.dfTarget(r.id, scope, 'LUNA-E019', "the target of 'req_count'");
            this.expr(r.value, scope);
          }
          break;
        case 'map':
          if (r.property === 'locator_cyclic' || r.property === 'locator_replicating') this.locatorMap(r.id, r.expr, r.property, scope);
          else if (r.property === 'afterpush') this.dfTarget(r.id, scope, 'LUNA-E019', "the source of 'afterpush'");
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
      const uses = p.target.uses;
      // a reference with fewer indices passed to a sub as a name may get the rest inside it
      if (uses.length > 0 && !uses.some((u) => u.count === p.count || (u.alias && u.count < p.count))) {
        this.mismatch(p, p.target.name, uses.map((u) => u.count));
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
    if (isDf(sym)) sym.uses.push({ count: e.indices.length, alias: false });
    else if (e.indices.length > 0) this.err('LUNA-E023', `'${e.name}' is not a DF and cannot be indexed`, e.pos);
    return sym;
  }

  private mentionsDf(e: Expr, scope: Scope): boolean {
    switch (e.kind) {
      case 'int': case 'real': case 'string': return false;
      case 'id': { const s = scope.lookup(e.name); return (s !== undefined && isDf(s)) || e.indices.some((i) => this.mentionsDf(i, scope)); }
      case 'cast': return this.mentionsDf(e.expr, scope);
      case 'neg': return this.mentionsDf(e.operand, scope);
      case 'bin': return this.mentionsDf(e.left, scope) || this.mentionsDf(e.right, scope);
      case 'cond': return [e.cond, e.then, e.else].some((x) => this.mentionsDf(x, scope));
    }
  }

  private expr(e: Expr, scope: Scope, mode: Mode = 'normal'): Ty {
    switch (e.kind) {
      case 'int': case 'real': case 'string': return e.kind;
      case 'id': {
        const sym = this.ref(e, scope, mode);
        if (!sym) return 'error';
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
        const t = this.expr(e.operand, scope, mode);
        if (t === 'string') { this.err('LUNA-E005', 'invalid operation on strings: -', e.pos); return 'error'; }
        return t;
      }
      case 'bin': {
        const l = this.expr(e.left, scope, mode);
        const r = this.expr(e.right, scope, mode);
        if (l === 'error' || r === 'error') return 'error';
        if (l === 'string' || r === 'string') {
          if (e.op === '==' || e.op === '!=') return 'int';
          if (e.op !== '+') { this.err('LUNA-E005', `invalid operation on strings: ${e.op}`, e.pos); return 'error'; }
          if (l === 'real' || r === 'real') this.err('LUNA-E010', 'a real cannot be used as a string', exprStart(l === 'real' ? e.left : e.right));
          return 'string';
        }
        if (['<', '>', '<=', '>=', '==', '!=', '&&', '||'].includes(e.op)) return l === 'value' && r === 'value' ? 'value' : 'int';
        if (l === 'value' && r === 'value') return 'value';
        return l === 'real' || r === 'real' ? 'real' : 'int';
      }
      case 'cond': {
        this.expr(e.cond, scope, mode);
        const a = this.expr(e.then, scope, mode);
        const b = this.expr(e.else, scope, mode);
        if (a === 'error' || b === 'error') return 'error';
        if (a === b) return a;
        if (a === 'string' || b === 'string') return 'string';
        return a === 'real' || b === 'real' ? 'real' : 'int';
      }
    }
  }
}
