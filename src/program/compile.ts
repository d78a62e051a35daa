// From the checked AST to what the runtime executes: a code table, sub templates with a flat
// frame layout (every name of a sub resolves to a slot at compile time), and spawn sites
// (one per statement, numbered in their block: the basis of stable CF global ids).
import type {
  Block, CfStmt, Expr, ForStmt, IdExpr, IfStmt, Import, MapRule, Program, Rule, Stmt, SubDef, WhileStmt,
} from '../lang/ast.js';
import type { Origin } from '../lang/source.js';
import { compileExpr, EvalError, num, type CDfRef, type CExpr, type ExprScope, type Frame } from './expr.js';
import { printExpr } from '../lang/let.js';
import { isPlain, mayWait, type ImportDef, type ParamType } from '../core/imports.js';
import { HeapExhausted, HeapGuard } from '../lang/heap.js';
import { KeyTable, spellKey } from './keys.js';


export interface SubTemplate {
  name: string;
  code: number;
  params: { name: string; type: ParamType; slot: number }[];
  nfparams: Map<string, number>;
  frameSize: number;
  body: CBlock;
  pos: number;
}

export interface CBlock {
  dfs: { slot: number; name: string }[];
  stmts: Site[];
}

/**
 * Argument of an atomic call. Every kind carries the same four fields, set in one order (the
 * ones it does not use null): the examination reads `kind` of each argument of every CF, and
 * one object shape keeps that read monomorphic (three shapes made it polymorphic).
 */
export type CArg =
  | { kind: 'in'; type: null; expr: CExpr; ref: null }                       // value param
  | { kind: 'val'; type: 'int' | 'real' | 'string'; expr: CExpr; ref: null }  // int/real/string param
  | { kind: 'out'; type: null; expr: null; ref: CDfRef };                     // name param

export interface SiteBase {
  /** index in CompiledProgram.sites: identical on every node (migration refers to it) */
  id: number;
  spawnNo: number;
  pos: number;
  origin: Origin;
  /** label name (explicit, or `_l<line>`) and index expressions */
  label: string;
  labelIdx: CExpr[];
  /** a label index reads a DF (`cf a[x[0]]`): reports and traces read it from what the CF received */
  labelReadsDf: boolean;
  /** target node of this CF; undefined = node 0 */
  locator?: (f: Frame) => number;
  stealable: boolean;
  /** `priority: e;` — order among ready fragments (an extension; see docs/language.md) */
  priority?: CExpr;
  /** user `request` items: fetched before anything else */
  requests: CDfRef[];
  /** `-->` targets and `delete` items: destroyed after the call */
  deletes: CDfRef[];
  /** `>>` targets: set to int 1 and published after the call */
  setdfs: CDfRef[];
  code: number;
  sub: SubTemplate | null;
}

export interface CallSite extends SiteBase {
  kind: 'call';
  imp: ImportDef;
  args: CArg[];
  /** how many of args are outputs (`name` arguments) */
  outCount: number;
  /** `req_count X = e;` rules; `out` is the output X is written as (its number among the name args) when the compiler could tell, else -1 */
  reqCount: { ref: CDfRef; expr: CExpr; out: number }[];
  unlimited: CDfRef[];
  drop: CDfRef[];
  afterpush: { ref: CDfRef; label: string; labelIdx: CExpr[]; owner: (f: Frame) => number }[];
  waits: CDfRef[];
  /**
   * Whether the output rules are the same for every CF of the site (req_count of constants,
   * each matched to its output; no drop, no afterpush): the interpreter then evaluates them once
   * and keeps them in `sharedRules` (read only), not an array per CF.
   */
  rulesConstant: boolean;
  sharedRules: number[] | null;
  /** marked `heavy` (language.md §4.4.14): its ucode runs long, so it never runs on the system thread */
  heavy: boolean;
}

export interface SubCallSite extends SiteBase {
  kind: 'subcall';
  target: SubTemplate;
  args: ({ kind: 'val'; type: 'int' | 'real' | 'string'; expr: CExpr } | { kind: 'name'; ref: CDfRef })[];
  nf: { slot: number; expr: CExpr }[];
}

export interface ForSite extends SiteBase { kind: 'for'; varSlot: number; first: CExpr; last: CExpr; body: CBlock }
export interface WhileSite extends SiteBase { kind: 'while'; cond: CExpr; varSlot: number; start: CExpr; out: CDfRef; body: CBlock }
export interface IfSite extends SiteBase { kind: 'if'; cond: CExpr; body: CBlock }

export type Site = CallSite | SubCallSite | ForSite | WhileSite | IfSite;

export interface CompiledProgram {
  codes: string[];
  imports: ImportDef[];
  subs: Map<string, SubTemplate>;
  main: SubTemplate;
  /** the synthetic site that calls main (gid = empty) */
  mainSite: SubCallSite;
  /** every spawn site, by id */
  sites: Site[];
  /** some CF may be stolen by idle nodes */
  hasStealable: boolean;
  /** some statement has a `priority` rule */
  hasPriority: boolean;
  /** some CF is marked `heavy` (its ucode runs long: on one node the workers boot at the program's start) */
  hasHeavy: boolean;
}

export class ProgramError extends Error {
  constructor(message: string, readonly origin?: Origin) { super(message); }
}

type Binding =
  /** `fixed`: set once per frame (a parameter), never by a loop or a rule */
  | { kind: 'val'; slot: number; type: 'int' | 'real' | 'string'; fixed?: boolean }
  | { kind: 'df'; slot: number };

class Scope {
  names = new Map<string, Binding>();
  maps: MapRule[] = [];
  constructor(readonly parent: Scope | null) {}
  lookup(n: string): Binding | undefined {
    for (let s: Scope | null = this; s; s = s.parent) { const b = s.names.get(n); if (b) return b; }
    return undefined;
  }
}

export function compileProgram(program: Program, originOf: (pos: number) => Origin): CompiledProgram {
  return new Compiler(originOf).run(program);
}

/**
 * Heap the compiler keeps per statement (a site with its closures): the least old space that
 * let it finish grew by 1.75–2.7 KB per site on Node 20 and 24 (dense calls, many small subs,
 * the front-end benchmark's realistic program).
 */
export const BYTES_PER_SITE = 4096;

/** Statements of every sub (what the compiler makes a site of), counted without recursion. */
export function countStatements(program: Program): number {
  let n = 0;
  const blocks: Block[] = [];
  for (const it of program.items) if (it.kind === 'sub') blocks.push(it.body);
  for (let b = blocks.pop(); b; b = blocks.pop()) {
    n += b.stmts.length;
    for (const s of b.stmts) if (s.kind !== 'cf') blocks.push(s.body);
  }
  return n;
}

/** Whether a CF of the program is marked `heavy` (language.md §4.4.14; the checks reject the mark anywhere else). */
export function marksHeavy(program: Program): boolean {
  const blocks: Block[] = [];
  for (const it of program.items) if (it.kind === 'sub') blocks.push(it.body);
  for (let b = blocks.pop(); b; b = blocks.pop()) {
    for (const s of b.stmts) {
      if (s.kind !== 'cf') blocks.push(s.body);
      else if (s.rules.some((r) => r.kind === 'flags' && r.flags.includes('heavy'))) return true;
    }
  }
  return false;
}

class Compiler {
  codes: string[] = ['for', 'while', 'if'];
  /** code numbers by name (a linear search of codes made a program of many subs quadratic) */
  private codeOf = new Map<string, number>(this.codes.map((c, i) => [c, i]));
  imports = new Map<string, ImportDef>();
  subs = new Map<string, SubTemplate>();
  sites: Site[] = [];
  private frame = 0;
  private cur: SubTemplate | null = null;
  /** stops a program whose sites outgrow the heap that BYTES_PER_SITE estimated */
  private readonly heap = new HeapGuard();

  constructor(private originOf: (pos: number) => Origin) {}

  run(program: Program): CompiledProgram {
    const defs: SubDef[] = [];
    for (const it of program.items) {
      if (it.kind === 'import') this.addImport(it);
      else if (it.kind === 'foreign') {
        // An inline C++ sub is an extern whose TypeScript replacement has the sub's name.
        const params = it.params.map((p) => p.type);
        this.imports.set(it.name, { alias: it.name, symbol: it.name, params, code: this.code(it.name), index: -1, waits: mayWait(params, false) });
      } else if (it.kind === 'sub') defs.push(it);
    }
    for (const d of defs) {
      // Later definitions win (as in the original).
      this.subs.set(d.name, { name: d.name, code: this.code(d.name), params: [], nfparams: new Map(), frameSize: 0, body: { dfs: [], stmts: [] }, pos: d.pos });
    }
    const chosen = new Map<string, SubDef>();
    for (const d of defs) chosen.set(d.name, d);
    for (const [name, d] of chosen) this.compileSub(this.subs.get(name)!, d);
    const main = this.subs.get('main');
    if (!main) throw new ProgramError('the program has no sub main');
    const mainSite = shaped<SubCallSite>({
      id: -1, spawnNo: 0, pos: main.pos, origin: this.originOf(main.pos), label: 'main', labelIdx: [], labelReadsDf: false, locator: undefined,
      stealable: false, priority: undefined, requests: [], deletes: [], setdfs: [], code: main.code, sub: null,
    }, { kind: 'subcall', target: main, args: [], nf: [] });
    const imports = [...this.imports.values()];
    imports.forEach((im, i) => { im.index = i; });
    return {
      codes: this.codes, imports, subs: this.subs, main, mainSite, sites: this.sites,
      hasStealable: this.sites.some((x) => x.stealable), hasPriority: this.sites.some((x) => x.priority !== undefined),
      hasHeavy: marksHeavy(program),
    };
  }

  private code(name: string): number {
    let i = this.codeOf.get(name);
    if (i === undefined) { i = this.codes.length; this.codes.push(name); this.codeOf.set(name, i); }
    return i;
  }

  private addImport(it: Import): void {
    const params = it.params.map((p) => p.type);
    this.imports.set(it.alias, { alias: it.alias, symbol: it.code, params, code: this.code(it.alias), index: -1, waits: mayWait(params, it.waits) });
  }

  private slot(): number { return this.frame++; }

  /** The frame slot that keeps fixed expression `e`, by its text: one per sub for each spelling. */
  private memoSlot(e: Expr): number {
    const text = printExpr(e);
    let s = this.memoSlots.get(text);
    if (s === undefined) { s = this.slot(); this.memoSlots.set(text, s); }
    return s;
  }

  private memoSlots = new Map<string, number>();

  private compileSub(t: SubTemplate, d: SubDef): void {
    this.frame = 0;
    this.memoSlots = new Map();
    this.ruleSlots = [];
    this.cur = t;
    const sc = new Scope(null);
    for (const p of d.params) {
      const slot = this.slot();
      t.params.push({ name: p.name, type: p.type, slot });
      sc.names.set(p.name, isPlain(p.type) ? { kind: 'val', slot, type: p.type, fixed: true } : { kind: 'df', slot });
    }
    // nfparams are declared in the sub's behaviour block: hidden int params for locators.
    for (const r of d.body.rules) {
      if (r.kind === 'enum' && r.property === 'nfparam') {
        for (const it of r.items) {
          const slot = this.slot();
          t.nfparams.set(it.name, slot);
          sc.names.set(it.name, { kind: 'val', slot, type: 'int', fixed: true });
        }
      }
    }
    t.body = this.block(d.body, sc);
    t.frameSize = this.frame;
    this.cur = null;
  }

  private block(b: Block, parent: Scope): CBlock {
    const sc = new Scope(parent);
    const dfs = b.dfs.map((d) => {
      const slot = this.slot();
      sc.names.set(d.name, { kind: 'df', slot });
      return { slot, name: d.name };
    });
    sc.maps = b.rules.filter((r): r is MapRule => r.kind === 'map');
    const stmts: Site[] = [];
    b.stmts.forEach((s, i) => stmts.push(this.stmt(s, i, sc)));
    return { dfs, stmts };
  }

  private stmt(s: Stmt, spawnNo: number, sc: Scope): Site {
    if (this.heap.exhausted()) throw new HeapExhausted('compiling');
    const site = this.site(s, spawnNo, sc);
    site.id = this.sites.length;
    this.sites.push(site);
    return site;
  }

  private site(s: Stmt, spawnNo: number, sc: Scope): Site {
    switch (s.kind) {
      case 'cf': return this.cf(s, spawnNo, sc);
      case 'for': return this.forStmt(s, spawnNo, sc);
      case 'while': return this.whileStmt(s, spawnNo, sc);
      case 'if': return this.ifStmt(s, spawnNo, sc);
      case 'let': throw new ProgramError('internal: let must be substituted before compilation', this.originOf(s.pos));
    }
  }

  // ------------------------------------------------------------------ expressions and refs

  private exprScope(sc: Scope): ExprScope {
    return {
      value: (n) => { const b = sc.lookup(n); return b && b.kind === 'val' ? b : undefined; },
      dfRef: (id) => this.dfRef(id, sc),
      memo: { fixed: (e) => fixedWorthKeeping(e, sc), slot: (e) => this.memoSlot(e) },
    };
  }

  expr(e: Expr, sc: Scope): CExpr {
    try { return compileExpr(e, this.exprScope(sc)); } catch (err) {
      if (err instanceof EvalError) throw new ProgramError(err.message, this.originOf(err.pos));
      throw err;
    }
  }

  /** A DF reference `x[i][j]`: its key (base key + indices) and its owner node from map rules. */
  dfRef(id: IdExpr, sc: Scope): CDfRef | undefined {
    const b = sc.lookup(id.name);
    if (!b || b.kind !== 'df') return undefined;
    const slot = b.slot;
    const before = this.refsCompiled;
    const idx = id.indices.map((e) => this.expr(e, sc));
    const name = id.name;
    const key = keyFn(slot, idx, id.pos);
    const rule = this.ownerRule(name, idx.length, sc, this.refsCompiled === before);
    const owner = ownerOf(rule, idx);
    this.refsCompiled++;
    const ref: CDfRef = { name, pos: id.pos, key, owner, at: locateFn(slot, idx, id.pos, rule, owner, this.keyTable(slot, idx.length)) };
    const repl = (owner as { replicas?: (f: Frame) => number[] }).replicas;
    if (repl) ref.replicas = repl;
    ref.form = { slot, idx };
    return ref;
  }

  /** The table of keys the references of the DF in `slot` with `arity` indices share. */
  private keyTable(slot: number, arity: number): KeyTable {
    const k = `${this.cur?.code ?? -1}/${slot}/${arity}`;
    let t = this.keyTables.get(k);
    if (t === undefined) { t = new KeyTable(arity); this.keyTables.set(k, t); }
    return t;
  }

  private readonly keyTables = new Map<string, KeyTable>();

  /**
   * A `locator_cyclic` map rule compiled once per sub: its index variables get frame slots and
   * its expression is compiled against them. Once per reference instead, every reference added
   * slots to the frame of every CF of the sub (a Task Bench stencil's CFs carried dozens).
   */
  private mapRule(r: MapRule, s: Scope): { binds: number[]; e: CExpr; quiet: boolean } {
    const known = this.mapRules.get(r);
    if (known && known.sub === this.cur) return known;
    // its expression reading the DFs it places would need their owners to find their owners
    if (this.compilingRules.has(r)) throw new ProgramError(`the locator_cyclic rule for ${r.id.name} needs the owner of ${r.id.name} itself (its expression reads ${r.id.name}, directly or through another rule)`, this.originOf(r.pos));
    this.compilingRules.add(r);
    const inner = new Scope(s);
    // A rule that reads no DF binds its indices in slots every such rule of the sub shares: it
    // is bound and evaluated with no other rule evaluated in between (only a DF read places
    // something). Its own slots made the PIC's main frame 198 slots, 95 of them rules' binds,
    // and every loop iteration copies the frame.
    const shared = readsNoDf(r.expr, r.id.indices, s);
    const binds = r.id.indices.map((ie, k) => {
      const slot = shared ? (this.ruleSlots[k] ??= this.slot()) : this.slot();
      if (ie.kind === 'id' && ie.indices.length === 0) inner.names.set(ie.name, { kind: 'val', slot, type: 'int' });
      return slot;
    });
    const before = this.refsCompiled;
    const e = this.expr(r.expr, inner);
    const quiet = this.refsCompiled === before && !dividesOrCalls(r.expr);
    this.compilingRules.delete(r);
    this.cur!.frameSize = Math.max(this.cur!.frameSize, this.frame);
    const c = { sub: this.cur, binds, e, quiet };
    this.mapRules.set(r, c);
    return c;
  }

  /** the bind slots the sub's rules that read no DF share (see mapRule) */
  private ruleSlots: number[] = [];
  private readonly mapRules = new Map<MapRule, { sub: SubTemplate | null; binds: number[]; e: CExpr; quiet: boolean }>();
  /** DF references compiled so far: an expression that added none reads no DF */
  private refsCompiled = 0;
  private readonly compilingRules = new Set<MapRule>();

  /**
   * Owner of `name[idx…]` (a DF or a CF label): the innermost visible map rule, else node 0.
   * `pureIdx`: the indices read no DF.
   */
  private ownerFn(name: string, idx: CExpr[], sc: Scope, pureIdx = false): (f: Frame) => number {
    return ownerOf(this.ownerRule(name, idx.length, sc, pureIdx), idx);
  }

  /** The map rule that places `name[…]` with `arity` indices (the innermost visible), if any. */
  private ownerRule(name: string, arity: number, sc: Scope, pureIdx: boolean): OwnerRule | undefined {
    for (let s: Scope | null = sc; s; s = s.parent) {
      for (const r of s.maps) {
        if (r.id.name !== name || r.id.indices.length !== arity) continue;
        if (r.property === 'locator_cyclic') {
          const { binds, e, quiet } = this.mapRule(r, s);
          // one node owns everything: a rule that reads no DF and cannot fault is not evaluated
          // (a fragment's references are placed by it, each one evaluating its indices again)
          return { kind: 'cyclic', binds, e, pos: r.pos, skipAlone: quiet && pureIdx };
        }
        if (r.property === 'locator_replicating') {
          // Readers fetch from the nearest replica; writers post to every replica (see replicas()).
          const k = r.expr.kind === 'id' && r.expr.name === 'all' ? -1 : this.expr(r.expr, s);
          return { kind: 'replicating', reader: replicaReader(k) };
        }
      }
    }
    return undefined;
  }

  // ------------------------------------------------------------------ statements

  // A site is its base with its kind's fields added in place (Object.assign): a spread copy of
  // the base plus those fields took Node 20's V8 about 45 µs per site (1.8 s for 40 000 calls).
  private base(s: Stmt, spawnNo: number, sc: Scope, rules: Rule[], code: number): SiteBase {
    const origin = this.originOf(s.pos);
    const labelId = s.kind === 'cf' ? s.label : undefined;
    const label = labelId ? labelId.name : `_l${origin.line}`;
    const labelIdx = labelId ? labelId.indices.map((e) => this.expr(e, sc)) : [];
    let locator: ((f: Frame) => number) | undefined;
    let stealable = false;
    let priority: CExpr | undefined;
    const requests: CDfRef[] = [], deletes: CDfRef[] = [];
    for (const r of rules) {
      if (r.kind === 'expr' && r.property === 'locator_cyclic') {
        const e = this.expr(r.expr, sc); const pos = r.pos;
        locator = (f) => mod(Math.trunc(num(e.type, e.ev(f), pos)), f.size);
      } else if (r.kind === 'expr' && r.property === 'priority') priority = this.expr(r.expr, sc);
      else if (r.kind === 'flags' && r.flags.includes('stealable')) stealable = true;
      else if (r.kind === 'enum' && r.property === 'request') append(requests, this.refs(r.items, sc));
      else if (r.kind === 'enum' && r.property === 'delete') append(deletes, this.refs(r.items, sc));
    }
    if (!locator) {
      const own = this.ownerFn(label, labelIdx, sc);
      if (own !== zero) locator = own;
    }
    return { id: -1, spawnNo, pos: s.pos, origin, label, labelIdx, labelReadsDf: labelIdx.some((e) => e.type === 'dyn'), locator, stealable, priority, requests, deletes, setdfs: [], code, sub: this.cur };
  }

  /**
   * A `block` argument: read like a value, for the DF holds the block's handle (the executor
   * holds the block itself while the CF runs); it must be a DF reference.
   */
  private blockArg(a: Expr, sc: Scope, which: string): CExpr {
    const e = this.expr(a, sc);
    if (!e.dfRef) throw new ProgramError(`${which} is a block: it must be the data fragment that holds the block`, this.originOf(a.pos));
    return e;
  }

  /** An argument that must be a DF reference, else `message` at its position. */
  private dfArg(a: Expr, sc: Scope, message: string): CDfRef {
    const r = a.kind === 'id' ? this.dfRef(a, sc) : undefined;
    if (!r) throw new ProgramError(message, this.originOf(a.pos));
    return r;
  }

  private refs(items: (IdExpr | Expr)[], sc: Scope): CDfRef[] {
    return items.map((it) => {
      const r = it.kind === 'id' ? this.dfRef(it, sc) : undefined;
      if (!r) throw new ProgramError(`not a data fragment: ${it.kind === 'id' ? it.name : 'expression'}`, this.originOf(it.pos));
      return r;
    });
  }

  private cf(s: CfStmt, spawnNo: number, sc: Scope): Site {
    const imp = this.imports.get(s.callee);
    const sub = this.subs.get(s.callee);
    if (!imp && !sub) throw new ProgramError(`unknown code fragment: ${s.callee}`, this.originOf(s.calleePos));
    const b = this.base(s, spawnNo, sc, s.rules, imp ? imp.code : sub!.code);
    b.setdfs = this.refs(s.setdfs ?? [], sc);
    append(b.deletes, this.refs(s.deletes ?? [], sc));
    if (sub && !imp) {
      if (s.args.length !== sub.params.length) throw new ProgramError(`${s.callee} takes ${sub.params.length} argument(s), ${s.args.length} given`, this.originOf(s.pos));
      const args = s.args.map((a, i): SubCallSite['args'][number] => {
        const p = sub.params[i]!;
        if (isPlain(p.type)) return { kind: 'val', type: p.type, expr: this.expr(a, sc) };
        return { kind: 'name', ref: this.dfArg(a, sc, `argument ${i + 1} of ${s.callee} must be a data fragment`) };
      });
      const nf: SubCallSite['nf'] = [];
      for (const r of s.rules) {
        if (r.kind === 'map' && r.property === 'nfparam') {
          const slot = sub.nfparams.get(r.id.name);
          if (slot === undefined) throw new ProgramError(`${s.callee} declares no nfparam ${r.id.name}`, this.originOf(r.pos));
          nf.push({ slot, expr: this.expr(r.expr, sc) });
        }
      }
      return shaped<SubCallSite>(b, { kind: 'subcall', target: sub, args, nf });
    }
    const im = imp!;
    if (s.args.length !== im.params.length) throw new ProgramError(`${s.callee} takes ${im.params.length} argument(s), ${s.args.length} given`, this.originOf(s.pos));
    const args = s.args.map((a, i): CArg => {
      const p = im.params[i]!;
      switch (p) {
        case 'name': return { kind: 'out', type: null, expr: null, ref: this.dfArg(a, sc, `output argument ${i + 1} of ${s.callee} must be a data fragment`) };
        case 'value': return { kind: 'in', type: null, expr: this.expr(a, sc), ref: null };
        case 'block': return { kind: 'in', type: null, expr: this.blockArg(a, sc, `argument ${i + 1} of ${s.callee}`), ref: null };
        case 'int': case 'real': case 'string': return { kind: 'val', type: p, expr: this.expr(a, sc), ref: null };
      }
    });
    const site = shaped<CallSite>(b, { kind: 'call', imp: im, args, outCount: args.filter((a) => a.kind === 'out').length, reqCount: [], unlimited: [], drop: [], afterpush: [], waits: [], rulesConstant: false, sharedRules: null, heavy: s.rules.some((r) => r.kind === 'flags' && r.flags.includes('heavy')) });
    // the output arguments as written, so that a rule naming one of them needs no key matching at run time
    const outIds = s.args.filter((_, i) => im.params[i] === 'name').map((a) => (a.kind === 'id' ? printExpr(a) : ''));
    for (const r of s.rules) {
      if (r.kind === 'assign' && r.property === 'req_count') site.reqCount.push({ ref: this.refs([r.id], sc)[0]!, expr: this.expr(r.value, sc), out: sameAs(r.id, outIds) });
      else if (r.kind === 'enum' && r.property === 'req_unlimited') append(site.unlimited, this.refs(r.items, sc));
      else if (r.kind === 'enum' && r.property === 'drop') append(site.drop, this.refs(r.items, sc));
      else if (r.kind === 'enum' && r.property === 'wait') append(site.waits, this.refs(r.items, sc));
      else if (r.kind === 'map' && r.property === 'afterpush') {
        const target = r.expr;
        if (target.kind !== 'id') throw new ProgramError('afterpush target must be a CF label', this.originOf(r.pos));
        const labelIdx = target.indices.map((e) => this.expr(e, sc));
        site.afterpush.push({ ref: this.refs([r.id], sc)[0]!, label: target.name, labelIdx, owner: this.ownerFn(target.name, labelIdx, sc) });
      }
    }
    site.rulesConstant = site.reqCount.length > 0 && site.drop.length === 0 && site.afterpush.length === 0 && site.reqCount.every((r) => r.out >= 0 && r.expr.k !== undefined);
    return site;
  }

  private loopScope(sc: Scope, v: string): { inner: Scope; slot: number } {
    const inner = new Scope(sc);
    const slot = this.slot();
    inner.names.set(v, { kind: 'val', slot, type: 'int' });
    return { inner, slot };
  }

  // A loop's own CF only unrolls it (placed by its label's map rule, if any); the rules written
  // after its body (`for i = … { … } @ { locator_cyclic: i; }`) belong to each iteration, so
  // they see the loop variable: see iterationBody.
  private forStmt(s: ForStmt, spawnNo: number, sc: Scope): ForSite {
    const b = this.base(s, spawnNo, sc, [], 0);
    const first = this.expr(s.first, sc), last = this.expr(s.last, sc);
    const { inner, slot } = this.loopScope(sc, s.var);
    return shaped<ForSite>(b, { kind: 'for', varSlot: slot, first, last, body: this.iterationBody(s, inner) });
  }

  private whileStmt(s: WhileStmt, spawnNo: number, sc: Scope): WhileSite {
    const b = this.base(s, spawnNo, sc, [], 1);
    const { inner, slot } = this.loopScope(sc, s.var);
    const cond = this.expr(s.cond, inner);
    const start = this.expr(s.start, sc);
    const out = this.refs([s.out], sc)[0]!;
    return shaped<WhileSite>(b, { kind: 'while', cond, varSlot: slot, start, out, body: this.iterationBody(s, inner) });
  }

  /**
   * The body of a loop. When the body has rules for a CF (a locator or priority expression,
   * `stealable`, `request`, `delete`), each iteration is one CF that carries them — an `if 1`
   * site evaluated with the loop variable set — and spawns the body's statements. Map rules
   * describe the block and stay in its scope (block()).
   */
  private iterationBody(s: ForStmt | WhileStmt, inner: Scope): CBlock {
    const own = s.body.rules.filter((r) => r.kind === 'expr' || (r.kind === 'flags' && r.flags.includes('stealable'))
      || (r.kind === 'enum' && (r.property === 'request' || r.property === 'delete')));
    if (own.length === 0) return this.block(s.body, inner);
    const b = this.base(s, 0, inner, own, 2);
    const iteration = shaped<IfSite>(b, { kind: 'if', cond: { type: 'int' as const, ev: () => 1 }, body: this.block(s.body, inner) });
    iteration.id = this.sites.length;
    this.sites.push(iteration);
    return { dfs: [], stmts: [iteration] };
  }

  private ifStmt(s: IfStmt, spawnNo: number, sc: Scope): IfSite {
    const b = this.base(s, spawnNo, sc, s.body.rules, 2);
    return shaped<IfSite>(b, { kind: 'if', cond: this.expr(s.cond, sc), body: this.block(s.body, sc) });
  }
}

function zero(): number { return 0; }

type AnySite = SiteBase & Omit<CallSite, keyof SiteBase> & Omit<SubCallSite, keyof SiteBase | 'kind' | 'args'> & Omit<ForSite, keyof SiteBase | 'kind'>
  & Omit<WhileSite, keyof SiteBase | 'kind' | 'varSlot' | 'body'>;

/**
 * The site of `base` with its kind's fields (`own`), as one object literal with every kind's
 * fields in one order (those of other kinds null, 0, -1 or false), so that sites of every kind
 * share one object shape: the runtime reads `kind`, `requests`, `locator`, `code`, `id` of every
 * CF's site, and five shapes made each such read polymorphic in V8 (2–3 shapes at one read in a
 * stencil run). One literal, not the base with the fields added (Object.assign): past 12
 * properties outside the object V8 turns an object so extended into a dictionary, whose reads
 * optimised code cannot inline (call sites had 11).
 */
function shaped<T extends Site>(base: SiteBase, own: Omit<T, keyof SiteBase>): T {
  const b = base, o = own as unknown as Partial<AnySite> & { kind: Site['kind'] };
  const site = {
    id: b.id, spawnNo: b.spawnNo, pos: b.pos, origin: b.origin, label: b.label, labelIdx: b.labelIdx, labelReadsDf: b.labelReadsDf,
    locator: b.locator, stealable: b.stealable, priority: b.priority, requests: b.requests, deletes: b.deletes, setdfs: b.setdfs,
    code: b.code, sub: b.sub,
    kind: o.kind, imp: o.imp ?? null, args: o.args ?? null, outCount: o.outCount ?? 0, reqCount: o.reqCount ?? null,
    unlimited: o.unlimited ?? null, drop: o.drop ?? null, afterpush: o.afterpush ?? null, waits: o.waits ?? null,
    rulesConstant: o.rulesConstant ?? false, sharedRules: o.sharedRules ?? null, heavy: o.heavy ?? false, target: o.target ?? null,
    nf: o.nf ?? null, varSlot: o.varSlot ?? -1, first: o.first ?? null, last: o.last ?? null, cond: o.cond ?? null,
    start: o.start ?? null, out: o.out ?? null, body: o.body ?? null,
  };
  return site as unknown as T;
}

/** Operators an expression fixed for a frame must have to be kept in a slot (one costs its read). */
const KEEP_OPS = 2;
/** Nodes looked at to tell: a larger expression is evaluated as it is. */
const KEEP_WALK = 64;

/**
 * Whether `e` depends only on constants and names fixed for a frame (no loop variable, rule
 * variable or DF) and has at least KEEP_OPS operators. A string or real cast is kept too: pure.
 */
function fixedWorthKeeping(root: Expr, sc: Scope): boolean {
  const stack: Expr[] = [root];
  let ops = 0;
  for (let seen = 0; stack.length > 0; seen++) {
    if (seen > KEEP_WALK) return false;
    const e = stack.pop()!;
    switch (e.kind) {
      case 'int': case 'real': case 'string': break;
      case 'id': {
        if (e.indices.length > 0) return false;
        const b = sc.lookup(e.name);
        if (!b || b.kind !== 'val' || !b.fixed) return false;
        break;
      }
      case 'neg': ops++; stack.push(e.operand); break;
      case 'cast': ops++; stack.push(e.expr); break;
      case 'cond': ops++; stack.push(e.cond, e.then, e.else); break;
      case 'bin': ops++; stack.push(e.left, e.right); break;
    }
  }
  return ops >= KEEP_OPS;
}

/** The output (by its number among the name args) written exactly as `id`, else -1. */
function sameAs(id: IdExpr, outIds: string[]): number {
  const k = printExpr(id);
  return outIds.indexOf(k) === outIds.lastIndexOf(k) ? outIds.indexOf(k) : -1;
}

/** dst.push(...xs) without spreading: a rule may list more items than a call takes arguments. */
function append<T>(dst: T[], xs: readonly T[]): void {
  for (const x of xs) dst.push(x);
}

export function mod(a: number, n: number): number { const r = a % n; return r < 0 ? r + n : r; }

/** Key of `x[i][j]`: the base key in the slot (a fresh `x#uid`, or an alias) + `.i.j`. */
function keyFn(slot: number, idx: CExpr[], pos: number): (f: Frame) => string {
  const parts = idx.map((a) => indexPart(a, pos));
  if (parts.every((p) => typeof p === 'string')) {
    const tail = (parts as string[]).join('');
    return tail === '' ? (f) => f.env[slot] as string : (f) => (f.env[slot] as string) + tail;
  }
  // an index known at compile time is spelled once, with what follows it, into a constant suffix
  if (parts.length === 1) {
    const a = parts[0] as (f: Frame) => number;
    return (f) => `${f.env[slot] as string}.${a(f)}`;
  }
  if (parts.length === 2) {
    const [a, b] = parts;
    if (typeof b === 'string') { const ea = a as (f: Frame) => number; return (f) => `${f.env[slot] as string}.${ea(f)}${b}`; }
    if (typeof a === 'string') { const eb = b as (f: Frame) => number; return (f) => `${f.env[slot] as string}${a}.${eb(f)}`; }
    const ea = a!, eb = b;
    return (f) => `${f.env[slot] as string}.${ea(f)}.${eb(f)}`;
  }
  return (f) => {
    let k = f.env[slot] as string;
    for (const p of parts) k += typeof p === 'string' ? p : '.' + p(f);
    return k;
  };
}

/** A map rule as a reference's owner needs it. */
type OwnerRule =
  | { kind: 'cyclic'; binds: number[]; e: CExpr; pos: number; skipAlone: boolean }
  | { kind: 'replicating'; reader: (f: Frame) => number };

/** The owner of a reference with indices `idx` under `rule` (node 0 without one). */
function ownerOf(rule: OwnerRule | undefined, idx: CExpr[]): (f: Frame) => number {
  if (rule === undefined) return zero;
  if (rule.kind === 'replicating') return rule.reader;
  const { binds, e, pos, skipAlone } = rule, n = binds.length;
  // all indices are evaluated before any is bound: the rule's references share its slots,
  // and an index may read a DF the same rule places (x[x[i]])
  const vals = new Array<number>(n);
  return (f) => {
    if (skipAlone && f.size === 1) return 0;
    // the rule's index variables are ints: bound truncated, as every int use reads them
    for (let i = 0; i < n; i++) vals[i] = Math.trunc(num(idx[i]!.type, idx[i]!.ev(f), pos)) | 0;
    return ruleOwner(f, binds, vals, e, pos);
  };
}

/** Bind a rule's index variables to `vals` and evaluate it: the node, mod the run's size. */
function ruleOwner(f: Frame, binds: number[], vals: number[], e: CExpr, pos: number): number {
  const env = f.env;
  for (let i = 0; i < binds.length; i++) env[binds[i]!] = vals[i]! | 0;
  return mod(Math.trunc(num(e.type, e.ev(f), pos)), f.size);
}

/**
 * The key and owner of a reference at once (CDfRef.at): every index evaluated once, in order,
 * into a buffer of the reference; the key found in the table its DF's references share (or
 * spelled, its constant parts merged), the rule bound from it. Called with `f.missing` clear: an index that is a DF still to come sets it
 * and leaves the owner 0 (the caller retries once it came: a rule fed a placeholder could fault
 * where nothing is wrong). An index that is not an int is truncated, as the original's key
 * conversion does.
 */
function locateFn(slot: number, idx: CExpr[], pos: number, rule: OwnerRule | undefined, owner: (f: Frame) => number, table: KeyTable): (f: Frame) => string {
  const n = idx.length;
  // what stands between the variable indices: `.3.` before a variable after constant 3
  const vars: ((f: Frame) => number)[] = [];
  const seps: string[] = [''];
  for (const a of idx) {
    const part = indexPart(a, pos);
    if (typeof part === 'string') seps[seps.length - 1] += part;
    else { seps[seps.length - 1] += '.'; vars.push(part); seps.push(''); }
  }
  const cyclic = rule !== undefined && rule.kind === 'cyclic' ? rule : undefined;
  // the rule binds every index: constants too (their values, once)
  const vals = new Array<number>(n).fill(0);
  const varAt: number[] = [];
  idx.forEach((a, i) => { if (a.k !== undefined) vals[i] = a.k; else varAt.push(i); });
  const nv = vars.length;
  const spell = spellKey(seps, nv);
  const place = (f: Frame): number => {
    if (cyclic === undefined) return owner(f);
    if (cyclic.skipAlone && f.size === 1) return 0;
    return ruleOwner(f, cyclic.binds, vals, cyclic.e, cyclic.pos);
  };
  // a key not in the table (or whose indices do not pack): spelled, and kept when it packs
  const spelled = (base: string, packed: number): string => {
    if (packed < 0) return spell(base, vals, varAt);
    const key = spell(base, vals, varAt);
    table.set(base, packed, key);
    return key;
  };
  // The common shapes packed here, in the closure: every reference of every fragment runs it,
  // and until TurboFan's code arrives (the first thousands of fragments) each call and each
  // property read is a builtin call; the bound is captured, not read from the table.
  const bound = table.bound;
  const at0 = varAt[0] ?? 0, v0 = vars[0];
  if (n === 2 && nv === 2) {
    const v1 = vars[1]!;
    return (f) => {
      const i0 = v0!(f), i1 = v1(f);
      vals[0] = i0;
      vals[1] = i1;
      const base = f.env[slot] as string, packed = i0 >= 0 && i0 < bound && i1 >= 0 && i1 < bound ? i0 * bound + i1 : -1;
      const key = (packed < 0 ? undefined : table.get(base, packed)) ?? spelled(base, packed);
      f.located = f.missing ? 0 : cyclic === undefined ? owner(f) : place(f);
      return key;
    };
  }
  if (n === 2 && nv === 1) {
    const c = vals[1 - at0]!; // the constant index
    return (f) => {
      const i = v0!(f);
      vals[at0] = i;
      const i0 = at0 === 0 ? i : c, i1 = at0 === 0 ? c : i;
      const base = f.env[slot] as string, packed = i0 >= 0 && i0 < bound && i1 >= 0 && i1 < bound ? i0 * bound + i1 : -1;
      const key = (packed < 0 ? undefined : table.get(base, packed)) ?? spelled(base, packed);
      f.located = f.missing ? 0 : cyclic === undefined ? owner(f) : place(f);
      return key;
    };
  }
  if (n === 1 && nv === 1) {
    return (f) => {
      const i = v0!(f);
      vals[0] = i;
      const base = f.env[slot] as string, packed = i >= 0 && i < bound ? i : -1;
      const key = (packed < 0 ? undefined : table.get(base, packed)) ?? spelled(base, packed);
      f.located = f.missing ? 0 : cyclic === undefined ? owner(f) : place(f);
      return key;
    };
  }
  return (f) => {
    for (let i = 0; i < nv; i++) vals[varAt[i]!] = vars[i]!(f);
    const base = f.env[slot] as string;
    let key = base;
    if (n > 0) { const packed = table.pack(vals); key = (packed < 0 ? undefined : table.get(base, packed)) ?? spelled(base, packed); }
    f.located = f.missing ? 0 : place(f);
    return key;
  };
}

/**
 * One index of a key: `.3` when it is a constant, else the closure of its value (an int read as
 * it is, anything else truncated as the original's key conversion does).
 */
function indexPart(a: CExpr, pos: number): string | ((f: Frame) => number) {
  if (a.k !== undefined) return `.${a.k}`;
  if (a.slot !== undefined) { const s = a.slot; return (f) => f.env[s] as number; }
  if (a.type === 'int') return a.ev as (f: Frame) => number;
  const t = a.type, ev = a.ev;
  return (f) => Math.trunc(num(t, ev(f), pos));
}

/**
 * Whether any node of the expression tree `root` passes `test`. Walked with an explicit stack:
 * any tree the front end accepts can be asked.
 */
function anyNode(root: Expr, test: (e: Expr) => boolean): boolean {
  const stack: Expr[] = [root];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (test(e)) return true;
    switch (e.kind) {
      case 'int': case 'real': case 'string': case 'id': break;
      case 'neg': stack.push(e.operand); break;
      case 'cast': stack.push(e.expr); break;
      case 'cond': stack.push(e.cond, e.then, e.else); break;
      case 'bin': stack.push(e.left, e.right); break;
    }
  }
  return false;
}

/** Whether `e` divides (an int division or remainder by zero faults) or indexes (an index may read a DF). */
function dividesOrCalls(root: Expr): boolean {
  return anyNode(root, (e) => (e.kind === 'id' && e.indices.length > 0) || (e.kind === 'bin' && (e.op === '/' || e.op === '%')));
}

/**
 * Whether a map rule's expression `root` reads no DF: every name in it is one of the rule's
 * index variables (`indices`) or a value visible in `sc`, and none is indexed.
 */
function readsNoDf(root: Expr, indices: readonly Expr[], sc: Scope): boolean {
  const bound = new Set(indices.flatMap((ie) => (ie.kind === 'id' && ie.indices.length === 0 ? [ie.name] : [])));
  return !anyNode(root, (e) => e.kind === 'id' && (e.indices.length > 0 || (!bound.has(e.name) && sc.lookup(e.name)?.kind !== 'val')));
}

/** Replicated DFs: the owner a reader asks is its nearest replica (encoded as -2 - k for post). */
function replicaReader(k: CExpr | -1): (f: Frame) => number {
  const every = (f: Frame): number => (k === -1 ? 1 : Math.max(1, Math.trunc(num(k.type, k.ev(f), 0))));
  const reader = (f: Frame): number => {
    const self = f.self;
    if (k === -1) return self;
    const kk = Math.max(1, Math.trunc(num(k.type, k.ev(f), 0)));
    let r = Math.floor((self + Math.floor(kk / 2)) / kk) * kk;
    if (r >= f.size) r -= kk;
    return Math.max(0, r);
  };
  // Writers post a copy to every replica: all nodes, or 0, k, 2k, … (docs/language.md §4.4.4).
  return Object.assign(reader, {
    replicas: (f: Frame): number[] => {
      const kk = every(f), out: number[] = [];
      for (let r = 0; r < f.size; r += kk) out.push(r);
      return out;
    },
  });
}
