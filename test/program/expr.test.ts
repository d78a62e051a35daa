// Compiled expressions (src/program/expr.ts, compile.ts): the closures the system thread runs for
// every index, argument and locator rule. Short int chains are fused into operator-specialised
// closures; these tests hold them to C's int semantics (32-bit wrap, truncating division, the
// remainder's sign, faults on division by zero) against a reference evaluator in BigInt, on
// random expressions short enough to fuse and long enough not to, and check DF keys and owners.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileFrontEnd, renderDiagnostics } from '../../src/lang/index.js';
import { compileProgram, type CallSite, type CompiledProgram, type ForSite } from '../../src/program/compile.js';
import { argValue, compileExpr, EvalError, type CDfRef, type CExpr, type ExprScope, type Frame } from '../../src/program/expr.js';
import type { Expr } from '../../src/lang/ast.js';
import * as keys from '../../src/program/keys.js';
import { T_INT, T_REAL, type DfValue } from '../../src/ucode/value.js';

function compile(source: string): CompiledProgram {
  const r = compileFrontEnd('t.fa', { source });
  assert.ok(r.program, renderDiagnostics(r.diagnostics, r.pre));
  return compileProgram(r.program, () => ({ file: 't.fa', line: 1, col: 1 }) as never);
}

/** A frame over `env` whose DF reads come from `dfs` (and are logged). */
function frame(env: unknown[], dfs: Map<string, DfValue> = new Map(), size = 1): Frame & { reads: string[] } {
  const reads: string[] = [];
  return { env, missing: false, size, self: 0, located: 0, reads, read: (key) => { reads.push(key); return dfs.get(key); } };
}

// ------------------------------------------------------------------ random int expressions

type Node = { k: 'lit'; v: number } | { k: 'var'; name: 'n' | 'm' | 'i' } | { k: 'df' } | { k: 'neg'; e: Node } | { k: 'bin'; op: string; l: Node; r: Node };
const OPS = ['+', '-', '*', '/', '%', '<', '>', '<=', '>=', '==', '!='];

/** A deterministic generator (xorshift): the failing seed is in the message. */
function rng(seed: number): () => number {
  let s = seed | 0 || 1;
  return () => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return (s >>> 0) / 4294967296; };
}

function gen(r: () => number, depth: number): Node {
  const x = r();
  if (depth <= 0 || x < 0.3) {
    const y = r();
    if (y < 0.35) return { k: 'lit', v: r() < 0.15 ? 2147483647 : Math.floor(r() * 7) };
    if (y < 0.85) return { k: 'var', name: (['n', 'm', 'i'] as const)[Math.floor(r() * 3)]! };
    return { k: 'df' };
  }
  if (x < 0.38) return { k: 'neg', e: gen(r, depth - 1) };
  // a left-leaning chain of 1–7 links: up to 4 fuse, longer ones take the loop
  let e = gen(r, depth - 1);
  const links = 1 + Math.floor(r() * 7);
  for (let j = 0; j < links; j++) e = { k: 'bin', op: OPS[Math.floor(r() * OPS.length)]!, l: e, r: gen(r, depth - 2) };
  return e;
}

function print(e: Node): string {
  switch (e.k) {
    case 'lit': return String(e.v);
    case 'var': return e.name;
    case 'df': return 'x[1]';
    case 'neg': return `-(${print(e.e)})`;
    // parentheses make no node: `(a + b) * c` is still one chain of two links
    case 'bin': return `(${print(e.l)}) ${e.op} (${print(e.r)})`;
  }
}

const wrap = (v: bigint): bigint => BigInt.asIntN(32, v);

/** C int semantics in BigInt: 'fault' on a division or remainder by zero. */
function ref(e: Node, env: Record<string, number>, df: number): bigint | 'fault' {
  switch (e.k) {
    case 'lit': return BigInt(e.v);
    case 'var': return BigInt(env[e.name]!);
    case 'df': return BigInt(df);
    case 'neg': { const a = ref(e.e, env, df); return a === 'fault' ? a : wrap(-a); }
    case 'bin': {
      const a = ref(e.l, env, df);
      if (a === 'fault') return a;
      const b = ref(e.r, env, df);
      if (b === 'fault') return b;
      switch (e.op) {
        case '+': return wrap(a + b);
        case '-': return wrap(a - b);
        case '*': return wrap(a * b);
        case '/': return b === 0n ? 'fault' : wrap(a / b);
        case '%': return b === 0n ? 'fault' : wrap(a % b);
        case '<': return a < b ? 1n : 0n;
        case '>': return a > b ? 1n : 0n;
        case '<=': return a <= b ? 1n : 0n;
        case '>=': return a >= b ? 1n : 0n;
        case '==': return a === b ? 1n : 0n;
        default: return a !== b ? 1n : 0n;
      }
    }
  }
}

test('int expressions: fused or chained, they compute what C computes (wrap, truncation, remainder sign, faults)', () => {
  const N = 400;
  const exprs: Node[] = [];
  for (let s = 1; exprs.length < N; s++) exprs.push(gen(rng(s * 7919), 4));
  const body = exprs.map((e, j) => `    cf c[${j}]: n1(${print(e)});`).join('\n');
  const p = compile(`import c_n(int) as n1;\nsub main(int n, int m) {\n  df x;\n  for i = 0..0 {\n${body}\n  }\n}\n`);
  const loop = p.main.body.stmts[0] as ForSite;
  const sites = loop.body.stmts as CallSite[];
  const cases: [number, number, number, number][] = [[3, -7, 5, 2], [0, 1, -1, 0], [-2147483648, -1, 2147483647, -3], [13, 4, 0, 9]];
  let faults = 0, fused = 0;
  for (const [n, m, i, d] of cases) {
    const env: unknown[] = [];
    env[p.main.params[0]!.slot] = n;
    env[p.main.params[1]!.slot] = m;
    env[p.main.body.dfs[0]!.slot] = 'x#';
    env[loop.varSlot] = i;
    const f = frame(env, new Map([['x#.1', { t: T_INT, v: d }]]));
    sites.forEach((site, j) => {
      const want = ref(exprs[j]!, { n, m, i }, d);
      const a = site.args[0]!;
      assert.ok(a.kind === 'val');
      if (a.expr.type === 'int' && exprs[j]!.k === 'bin') fused++;
      const what = `${print(exprs[j]!)} at n=${n} m=${m} i=${i} x[1]=${d}`;
      if (want === 'fault') {
        faults++;
        assert.throws(() => argValue(a.expr, 'int', f, site.pos), (e: unknown) => e instanceof EvalError && /integer (division|remainder) by zero/.test(e.message), what);
      } else assert.equal(argValue(a.expr, 'int', f, site.pos), Number(want), what);
    });
  }
  assert.ok(faults > 20 && fused > 100, `the expressions reach both the faults (${faults}) and the fused int chains (${fused})`);
});

test('int constants fold at compile time; a division by a constant zero still faults when it runs, at its position', () => {
  const p = compile('import c_n(int) as n1;\nsub main(int n) {\n  n1(2 * 3 + 1);\n  n1(-(4 - 9) % 3);\n  n1(n / (2 - 2));\n}\n');
  const [a, b, c] = (p.main.body.stmts as CallSite[]).map((s) => s.args[0]! as { expr: CExpr });
  assert.equal(a!.expr.k, 7);
  assert.equal(b!.expr.k, 2);
  assert.equal(c!.expr.k, undefined);
  const env: unknown[] = [];
  env[p.main.params[0]!.slot] = 5;
  assert.throws(() => c!.expr.ev(frame(env)), (e: unknown) => e instanceof EvalError && /integer division by zero/.test(e.message) && e.pos > 0);
});

test('a real DF in int arithmetic is still an error on the fused path', () => {
  const p = compile('import c_n(int) as n1;\nsub main(int n) {\n  df x;\n  n1(x[0] + n - 1);\n}\n');
  const site = p.main.body.stmts[0] as CallSite;
  const env: unknown[] = [];
  env[p.main.params[0]!.slot] = 5;
  env[p.main.body.dfs[0]!.slot] = 'x#';
  const a = site.args[0]! as { expr: CExpr };
  assert.equal(argValue(a.expr, 'int', frame(env, new Map([['x#.0', { t: T_INT, v: 2 }]])), 0), 6);
  assert.throws(() => argValue(a.expr, 'int', frame(env, new Map([['x#.0', { t: T_REAL, v: 2.5 }]])), 0), /real DF \(2\.5\) is used in int arithmetic/);
});

// ------------------------------------------------------------------ keys and owners

const KEYS = `import c_v(value, value, value, name) as v;
sub main(int n, int m) {
  df x, y;
  for i = 0..n-1
    cf a[i]: v(x[i - 1][2], x[(i + 1) % m][i * 3 + n], x[7][i], y[i]);
} @ { locator_cyclic y[j] => j + 1; locator_cyclic x[j][k] => k / m; }
`;

function keysSetup(src: string, n: number, m: number, i: number): { site: CallSite; env: unknown[] } {
  const p = compile(src);
  const loop = p.main.body.stmts[0] as ForSite;
  const env: unknown[] = [];
  env[p.main.params[0]!.slot] = n;
  env[p.main.params[1]!.slot] = m;
  env[p.main.body.dfs[0]!.slot] = 'x#';
  env[p.main.body.dfs[1]!.slot] = 'y#';
  env[loop.varSlot] = i;
  return { site: loop.body.stmts[0] as CallSite, env };
}

test('DF keys: constant, variable and computed indices in every position spell the key', () => {
  const { site, env } = keysSetup(KEYS, 4, 3, 5);
  const f = frame(env);
  const keys = site.args.map((a) => (a.kind === 'out' ? a.ref : a.kind === 'in' ? a.expr.dfRef! : null)!.key(f));
  assert.deepEqual(keys, ['x#.4.2', 'x#.0.19', 'x#.7.5', 'y#.5']);
});

test('owners: a rule that reads no DF and cannot fault places on node 0 alone, and by its value on several nodes; a dividing rule still faults alone', () => {
  const { site, env } = keysSetup(KEYS, 4, 3, 5);
  const y = (site.args[3] as { ref: { owner: (f: Frame) => number } }).ref;
  assert.equal(y.owner(frame(env, new Map(), 1)), 0);
  assert.equal(y.owner(frame(env, new Map(), 4)), 2); // (5 + 1) mod 4
  const x = (site.args[1] as { expr: CExpr }).expr.dfRef!;
  assert.equal(x.owner(frame(env, new Map(), 4)), 2); // 19 / 3 = 6, mod 4
  assert.equal(x.owner(frame(env, new Map(), 1)), 0);
  const zero = keysSetup(KEYS, 4, 0, 5);
  const x0 = (zero.site.args[2] as { expr: CExpr }).expr.dfRef!; // x[7][i]: its rule divides by m = 0
  assert.throws(() => x0.owner(frame(zero.env, new Map(), 1)), /division by zero/);
  assert.throws(() => x0.owner(frame(zero.env, new Map(), 2)), /division by zero/);
});

test('owners: a rule that reads a DF requests it on one node too', () => {
  const src = KEYS.replace('locator_cyclic y[j] => j + 1;', 'locator_cyclic y[j] => x[j][0];');
  const { site, env } = keysSetup(src, 4, 3, 5);
  const y = (site.args[3] as { ref: { owner: (f: Frame) => number } }).ref;
  const f = frame(env, new Map([['x#.5.0', { t: T_INT, v: 3 }]]), 1);
  assert.equal(y.owner(f), 0);
  assert.deepEqual(f.reads, ['x#.5.0']);
  const g = frame(env, new Map([['x#.5.0', { t: T_INT, v: 3 }]]), 2);
  assert.equal(y.owner(g), 1);
});

test('owners: rules that read no DF share their bind slots; one that reads a DF keeps its own, whose bindings the DF\'s own rule leaves alone', () => {
  // both rules read no DF: x's two binds and y's one share two slots (params, DFs, loop variable: 5)
  assert.equal(compile(KEYS).main.frameSize, 5 + 2);
  // y's rule reads x[j + 1][0], placed by x's rule, which binds its j = j + 1 and k = 0 while y's j is still to be read
  const src = KEYS.replace('locator_cyclic y[j] => j + 1;', 'locator_cyclic y[j] => x[j + 1][0] + j;');
  assert.equal(compile(src).main.frameSize, 5 + 2 + 1);
  const { site, env } = keysSetup(src, 4, 3, 5);
  const y = (site.args[3] as { ref: CDfRef }).ref;
  const f = frame(env, new Map([['x#.6.0', { t: T_INT, v: 3 }]]), 4);
  assert.equal(y.owner(f), 0); // (3 + 5) mod 4
  assert.deepEqual(f.reads, ['x#.6.0']);
  const g = frame(env, new Map([['x#.6.0', { t: T_INT, v: 3 }]]), 4);
  assert.equal(y.at(g), 'y#.5');
  assert.equal(g.located, 0);
});

test('at: every reference gets the key and owner that key and owner give apart, on 1 to 5 nodes', () => {
  for (const [n, m, i] of [[4, 3, 5], [1, 7, 0], [9, 2, -3]] as const) {
    const { site, env } = keysSetup(KEYS, n, m, i);
    for (const size of [1, 2, 3, 5]) {
      for (const a of site.args) {
        const ref = a.kind === 'out' ? a.ref : a.kind === 'in' ? a.expr.dfRef! : null;
        if (!ref) continue;
        const f = frame(env, new Map(), size);
        f.located = -7;
        const key = ref.at(f);
        assert.equal(key, ref.key(frame(env, new Map(), size)), `${ref.name} n=${n} m=${m} i=${i}`);
        assert.equal(f.located, ref.owner(frame(env, new Map(), size)), `${ref.name} n=${n} m=${m} i=${i} on ${size}`);
        assert.equal(f.missing, false);
      }
    }
  }
});

test('at: swept over many indices twice (the second time from the key table), with and without owner rules: the key, the owner and the packed indices handed to the store agree with the text', () => {
  const plain = KEYS.replace(/\} @ \{[^}]*\}/, '}');
  assert.notEqual(plain, KEYS);
  for (const src of [KEYS, plain]) {
    for (let round = 0; round < 2; round++) {
      for (const i of [-2, -1, 0, 1, 2, 3, 5, 8]) {
        for (const [n, m] of [[4, 3], [2, 5], [3, 2]] as const) {
          const { site, env } = keysSetup(src, n, m, i);
          for (const a of site.args) {
            const ref = a.kind === 'out' ? a.ref : a.kind === 'in' ? a.expr.dfRef! : null;
            if (!ref) continue;
            const f = frame(env, new Map(), 3);
            const key = ref.at(f);
            const what = `${ref.name} i=${i} n=${n} m=${m} round ${round}`;
            assert.equal(key, ref.key(frame(env, new Map(), 3)), what);
            assert.equal(f.located, ref.owner(frame(env, new Map(), 3)), what);
            const idx = key.split('#')[1]!.split('.').slice(1).map(Number);
            if (idx.every((v) => v >= 0)) {
              // what the freed keys read instead of the text: the last key, its base and its indices packed
              assert.equal(keys.lastKey, key, what);
              const t = keys.lastKeyTable!;
              const packed = idx.length === 2 ? idx[0]! * t.bound + idx[1]! : idx[0]!;
              assert.equal(keys.lastKeyPacked, packed, what);
            }
          }
        }
      }
    }
  }
});

test('at: indices are evaluated once (a DF index read once), a missing index leaves the owner 0 and the rule unevaluated, a dividing rule faults', () => {
  const src = KEYS.replace('x[7][i], y[i]', 'x[7][i], y[x[i][0]]');
  const { site, env } = keysSetup(src, 4, 3, 5);
  const y = (site.args[3] as { ref: CDfRef }).ref;
  const f = frame(env, new Map([['x#.5.0', { t: T_INT, v: 6 }]]), 4);
  assert.equal(y.at(f), 'y#.6');
  assert.equal(f.located, 3); // 6 + 1 mod 4
  assert.deepEqual(f.reads, ['x#.5.0']);
  const g = frame(env, new Map(), 4);
  g.located = 9;
  y.at(g);
  assert.equal(g.missing, true);
  assert.equal(g.located, 0);
  const zero = keysSetup(KEYS, 4, 0, 5);
  const x0 = (zero.site.args[2] as { expr: CExpr }).expr.dfRef!;
  assert.throws(() => x0.at(frame(zero.env, new Map(), 1)), /division by zero/);
});

test('int division and remainder by a slot or a constant: C semantics, and a zero divisor faults at its position', () => {
  const src = `import c_v(int, int, int, int) as v;
sub main(int n, int m) { v((n + 3) % m, (n - 20) / m, (n + 3) % 4, (n - 20) / -3); }`;
  const p = compile(src);
  const site = p.main.body.stmts[0] as CallSite;
  const ev = (n: number, m: number): number[] => {
    const env: unknown[] = [];
    env[p.main.params[0]!.slot] = n;
    env[p.main.params[1]!.slot] = m;
    return site.args.map((a) => argValue((a as { expr: CExpr }).expr, 'int', frame(env), 0) as number);
  };
  assert.deepEqual(ev(5, 3), [2, -5, 0, 5]);
  assert.deepEqual(ev(-9, 4), [-2, -7, -2, 9]);
  assert.deepEqual(ev(2147483647, -1), [0, -2147483627, -2, -715827875]);
  assert.throws(() => ev(5, 0), (e: unknown) => e instanceof EvalError && /remainder by zero/.test(e.message) && e.pos > 0);
});

test('copies of a fixed expression (a macro expanded in every index) share one slot, evaluated once per frame', () => {
  const one = compile('import c_n(int) as n1;\nsub main(int n, int m) { n1((n + m - 1) / m); }\n');
  const many = compile('import c_n(int, int, int, int) as n4;\nsub main(int n, int m) { n4((n + m - 1) / m, (n + m - 1) / m, 2 * ((n + m - 1) / m), (n + m - 1) / m); }\n');
  assert.equal(many.main.frameSize, one.main.frameSize + 1); // the product is kept too
  const site = many.main.body.stmts[0] as CallSite;
  const env: unknown[] = new Array(many.main.frameSize);
  env[many.main.params[0]!.slot] = 10;
  env[many.main.params[1]!.slot] = 3;
  const f = frame(env);
  assert.deepEqual(site.args.map((a) => (a as { expr: CExpr }).expr.ev(f)), [4, 4, 8, 4]);
  assert.equal(env.filter((v) => v === 4).length, 1);
});

test('an expression fixed for the frame (over parameters only) is evaluated once and kept; one over a loop variable is not; a fault is not kept', () => {
  const src = `import c_n(int, int, int) as n1;
sub main(int n, int m) {
  for i = 0..3
    n1((n + m - 1) / m, (i + m - 1) / m, n / (m - m));
}`;
  const p = compile(src);
  const loop = p.main.body.stmts[0] as ForSite;
  const site = loop.body.stmts[0] as CallSite;
  const [fixed, byLoop, faulty] = site.args.map((a) => (a as { expr: CExpr }).expr);
  const env: unknown[] = new Array(p.main.frameSize);
  env[p.main.params[0]!.slot] = 10;
  env[p.main.params[1]!.slot] = 3;
  env[loop.varSlot] = 2;
  const f = frame(env);
  assert.equal(fixed!.ev(f), 4);
  // kept: a parameter changed behind its back (which the runtime never does) does not change it
  env[p.main.params[0]!.slot] = 100;
  assert.equal(fixed!.ev(f), 4);
  // a copy of the frame (a loop iteration) keeps it; a fresh frame computes it anew
  assert.equal(fixed!.ev(frame(env.slice())), 4);
  const fresh: unknown[] = new Array(p.main.frameSize);
  fresh[p.main.params[0]!.slot] = 100;
  fresh[p.main.params[1]!.slot] = 3;
  assert.equal(fixed!.ev(frame(fresh)), 34);
  // the loop variable's expression follows the variable
  assert.equal(byLoop!.ev(f), 1);
  env[loop.varSlot] = 7;
  assert.equal(byLoop!.ev(f), 3);
  for (let k = 0; k < 2; k++) assert.throws(() => faulty!.ev(f), /integer division by zero/);
});

test('each operand is compiled once: `i + x[i + x[…]]` nested 16 deep compiles each DF reference once and still evaluates', () => {
  // an int head followed by a DF operand fails the int fusion; its operands once went through the
  // compiler again on the general path, twice more at each level
  const depth = 16;
  let e: Expr = { kind: 'id', name: 'i', indices: [], pos: 0 };
  for (let k = 0; k < depth; k++) {
    e = { kind: 'bin', op: '+', left: { kind: 'id', name: 'i', indices: [], pos: 0 }, right: { kind: 'id', name: 'x', indices: [e], pos: 0 }, pos: 0 };
  }
  let refs = 0;
  const sc: ExprScope = {
    value: (n) => (n === 'i' ? { slot: 0, type: 'int' } : undefined),
    dfRef: (id) => {
      refs++;
      const idx = compileExpr(id.indices[0]!, sc); // as compile.ts's dfRef does
      const key = (f: Frame): string => `x.${String(idx.ev(f))}`;
      return { name: id.name, pos: id.pos, key, owner: () => 0, at: key };
    },
  };
  const c = compileExpr(e, sc);
  assert.equal(refs, depth);
  // every x[…] reads 2: the innermost key is x.1 (i = 1), each one out x.3
  const f = frame([1], new Map([['x.1', { t: T_INT, v: 2 }], ['x.3', { t: T_INT, v: 2 }]]));
  assert.equal(c.ev(f), 3);
  assert.equal(f.reads.length, depth);
  assert.equal(f.missing, false);
});
