// Front-end fuzzer: random token sequences and random mutations (tokens and characters
// deleted, duplicated, swapped, inserted; spans duplicated to nest deeper; truncation) of every
// example and valid fixture. Each input must come back as diagnostics or a program — never an
// exception, never a hang — and the diagnostics must be well formed and renderable; a program
// must also go through the compiler (which may only refuse it with a ProgramError).
//
//   LUNA_FUZZ_INPUTS=100000 node --test dist/test/lang/fuzz.test.js   # more inputs
//   LUNA_FUZZ_SEED=123 LUNA_FUZZ_INPUTS=1 node --test …               # replay one input
//
// Input k uses the seed LUNA_FUZZ_SEED + k (default seed 1), so a failure names the seed that
// replays it alone. Time is not asserted (the machine is shared); the slowest inputs, and any
// over the generous per-input deadline, are reported as test diagnostics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileFrontEnd, renderDiagnostics, type Diagnostic } from '../../src/lang/index.js';
import { originOf } from '../../src/lang/origin.js';
import { compileProgram, ProgramError } from '../../src/program/compile.js';
import { rng } from './generators.js';

const INPUTS = Number(process.env.LUNA_FUZZ_INPUTS ?? 3000);
const SEED = Number(process.env.LUNA_FUZZ_SEED ?? 1);
/** An input slower than this is reported (not failed: a loaded machine is not a bug). */
const DEADLINE_MS = 2000;

/** Every example and valid fixture, with the directory its includes resolve from. */
function corpus(): { name: string; text: string; dir: string }[] {
  const out: { name: string; text: string; dir: string }[] = [];
  const add = (dir: string): void => {
    for (const f of readdirSync(dir).sort()) if (f.endsWith('.fa')) out.push({ name: join(dir, f), text: readFileSync(join(dir, f), 'utf8'), dir });
  };
  for (const d of readdirSync('examples', { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    const dir = join('examples', d.name);
    add(dir);
    for (const s of readdirSync(dir, { withFileTypes: true })) if (s.isDirectory()) add(join(dir, s.name));
  }
  add('test/lang/fixtures-check/valid');
  add('test/lang/golden/parse');
  add('test/lang/golden/pp');
  return out;
}

/** Words the mutations insert: every token kind, preprocessor forms, deep-nesting openers. */
const VOCAB = [
  'sub', 'main', 'import', 'cf', 'df', 'for', 'while', 'if', 'else', 'let', 'in', 'out', 'SIZE', 'as', 'int', 'real', 'string',
  'name', 'value', 'rush', 'static', 'static_for', 'unrolling', 'CUDA', 'NOCPU', 'C++', 'head', '__block', '(', ')', '{', '}', '[',
  ']', ';', ':', ',', '.', '..', '=', '==', '!=', '<', '>', '<=', '>=', '=>', '&&', '||', '<<', '>>', '-->', '<--', '+', '-', '*',
  '/', '%', '?', '@', '$', '#', '&', '!', '|', '~', '"', '"s"', '"a\\q"', '0', '1', '42', '2147483648', '1.5', 'x', 'i', 'n',
  'a[i]', 'locator_cyclic', 'locator_replicating', 'priority', 'request', 'req_count', 'delete', 'afterpush', 'wait', 'nfparam',
  'stealable', 'all', '#define', '#define X', '#define F(a) $a', '#undef X', '#ifdef X', '#ifndef Y', '#else', '#endif',
  '#include "nope.fa"', '#bogus', '$X', '$F(', '$F(1)', '$F($F(2))', '${{', '$}}', '${<EOT}', 'EOT', '/*', '*/', '//', '`x', '\\',
  '\n', '\t', ' ', 'é', '\u{1F600}', '\u0000',
];

const TOKEN = /[A-Za-z_]\w*|\d+(?:\.\d+)?|"[^"\n]*"|\$\{\{|\$\}\}|-->|<--|\.\.|==|!=|<=|>=|=>|&&|\|\||<<|>>|\s+|./gsu;

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

function randomTokens(r: () => number): string {
  const n = 1 + Math.floor(r() * 300);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(pick(r, VOCAB), r() < 0.7 ? ' ' : '');
  return out.join('');
}

function mutate(r: () => number, text: string): string {
  let toks: string[] = text.match(TOKEN) ?? [];
  const rounds = 1 + Math.floor(r() * 8);
  for (let m = 0; m < rounds && toks.length > 0; m++) {
    const k = Math.floor(r() * toks.length);
    const j = Math.floor(r() * toks.length);
    switch (Math.floor(r() * 10)) {
      case 0: toks.splice(k, 1 + Math.floor(r() * 3)); break; // delete tokens
      case 1: toks.splice(k, 0, toks[k]!); break; // duplicate a token
      case 2: [toks[k], toks[j]] = [toks[j]!, toks[k]!]; break; // swap two tokens
      case 3: toks.splice(k, 0, pick(r, VOCAB), ' '); break; // insert a token
      case 4: { // duplicate a span many times (deep nesting, long chains)
        const a = Math.min(k, j), b = Math.min(toks.length, Math.max(k, j) + 1, a + 40);
        const span = toks.slice(a, b);
        const times = 1 + Math.floor(r() * (r() < 0.1 ? 400 : 5));
        const copies: string[] = [];
        for (let t = 0; t < times; t++) copies.push(...span);
        toks.splice(b, 0, ...copies);
        break;
      }
      case 5: toks = toks.slice(0, k); break; // truncate
      default: { // character-level: delete, insert, duplicate or replace a character
        const s = toks.join('');
        const c = Math.floor(r() * (s.length + 1));
        const op = Math.floor(r() * 4);
        const ch = r() < 0.5 ? pick(r, [...'(){}[];:,$#"/*\\`@<>=-+?.\n']) : String.fromCharCode(32 + Math.floor(r() * 95));
        const t = op === 0 ? s.slice(0, c) + s.slice(c + 1) : op === 1 ? s.slice(0, c) + ch + s.slice(c)
          : op === 2 ? s.slice(0, c) + s.slice(c, c + 1).repeat(2) + s.slice(c + 1) : s.slice(0, c) + ch + s.slice(c + 1);
        toks = t.match(TOKEN) ?? [];
      }
    }
  }
  return toks.join('');
}

const CODE = /^LUNA-[A-Z]\d{3}$/;

/** Run one input through everything; throws (with the reason) when something is wrong. */
function runOne(file: string, source: string, dir: string): void {
  const r = compileFrontEnd(file, { source, includePath: [dir] });
  for (const d of r.diagnostics) checkDiagnostic(d);
  renderDiagnostics(r.diagnostics, r.pre);
  if (r.program) {
    assert.ok(!r.diagnostics.some((d) => d.severity === 'error'), 'a program despite errors');
    try {
      compileProgram(r.program, (p) => originOf(r.pre, p));
    } catch (e) {
      if (!(e instanceof ProgramError)) throw e;
    }
  } else {
    assert.ok(r.diagnostics.some((d) => d.severity === 'error'), 'no program and no error');
  }
}

function checkDiagnostic(d: Diagnostic): void {
  assert.match(d.code, CODE);
  assert.ok(d.message.length > 0 && d.message.length < 2000, `message of ${d.code}`);
  if (d.origin) {
    assert.ok(Number.isInteger(d.origin.line) && d.origin.line >= 0 && Number.isInteger(d.origin.col) && d.origin.col >= 0, `origin of ${d.code}`);
  }
}

test(`fuzz: ${INPUTS} random and mutated sources (seeds ${SEED}..${SEED + INPUTS - 1}) never throw or hang`, { timeout: 30 * 60_000 }, (t) => {
  const files = corpus();
  assert.ok(files.length >= 20, 'the corpus holds the examples and fixtures');
  const slow: { ms: number; seed: number; kind: string }[] = [];
  for (let k = 0; k < INPUTS; k++) {
    const seed = SEED + k;
    const r = rng(seed);
    const base = pick(r, files);
    const random = r() < 0.2;
    const source = random ? randomTokens(r) : mutate(r, base.text);
    const kind = random ? 'random tokens' : `mutation of ${base.name}`;
    const t0 = performance.now();
    try {
      runOne(random ? 'fuzz.fa' : join(base.dir, 'fuzz.fa'), source, base.dir);
    } catch (e) {
      const shown = source.length > 20_000 ? `${JSON.stringify(source.slice(0, 20_000))}… (${source.length} characters)` : JSON.stringify(source);
      assert.fail(`fuzz input with seed ${seed} (${kind}) failed: ${(e as Error).stack ?? String(e)}\n`
        + `replay: LUNA_FUZZ_SEED=${seed} LUNA_FUZZ_INPUTS=1 node --test dist/test/lang/fuzz.test.js\ninput: ${shown}`);
    }
    slow.push({ ms: performance.now() - t0, seed, kind });
    if (slow.length > 20) slow.sort((a, b) => b.ms - a.ms).length = 10;
  }
  slow.sort((a, b) => b.ms - a.ms);
  const worst = slow[0];
  if (worst) t.diagnostic(`slowest input: seed ${worst.seed} (${worst.kind}), ${worst.ms.toFixed(1)} ms`);
  for (const s of slow.filter((x) => x.ms > DEADLINE_MS)) t.diagnostic(`over the ${DEADLINE_MS} ms deadline: seed ${s.seed} (${s.kind}), ${s.ms.toFixed(0)} ms`);
});
