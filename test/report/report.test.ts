// `luna report` on real traced runs: the page embeds exactly the analysis `luna analyze slow
// --json` prints, the timeline holds every fragment, two runs compare side by side, the page
// needs no network, and bad inputs are clear messages with a non-zero exit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unpack, type Packed } from '../../src/report/section.js';
import { ROOT, analysis, luna, pageData, tracedRun, type Analysis } from './helpers.js';
import { CHAINED, HELD, WRITTEN, writeHeldTrace, writeWaitingTrace } from '../analysis/written.js';

let dir = '', traceA = '', traceB = '', an: Analysis;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-report-'));
  traceA = join(dir, 'a.trace');
  traceB = join(dir, 'b.trace');
  tracedRun(traceA);
  tracedRun(traceB, ['--nodes', '1', '--threads', '2']);
  an = analysis(traceA);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

/** `luna report traceA -o -`: one page for every case that only reads it. */
let pageA: string | undefined;
const reportA = (): string => {
  if (pageA === undefined) {
    const r = luna(['report', traceA, '-o', '-']);
    assert.equal(r.status, 0, r.stderr);
    pageA = r.stdout;
  }
  return pageA;
};

const noStack = (s: string): void => assert.doesNotMatch(s, /\n\s+at .+:\d+:\d+/, `no stack trace: ${s}`);

test('the report embeds the same SLOW analysis and findings as luna analyze slow --json', () => {
  const out = join(dir, 'one.html');
  const r = luna(['report', traceA, '-o', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /wrote .*one\.html/);
  const html = readFileSync(out, 'utf8');
  const d = pageData(html);
  assert.equal(d.runs.length, 1);
  const { advice: _a, findings, ...slow } = an;
  assert.deepEqual(d.runs[0]!.slow, slow);
  assert.deepEqual(d.runs[0]!.findings, findings);
  // the totals table shows the analysis' numbers
  for (const f of ['S', 'L', 'O', 'W', 'U'] as const) {
    const m = new RegExp(`data-slow-total="${f}" data-run="0" data-ns="([^"]+)" data-pct="([^"]+)"`).exec(html);
    assert.ok(m, `a total row for ${f}`);
    assert.equal(Number(m[1]), an.t[f]);
    assert.equal(Number(m[2]), an.p[f]);
  }
  assert.match(html, /data-status="completed"/);
  assert.ok(html.includes('matmul_cyclic.fa'));
  // every recommendation is there, linked to a section of the page
  const links = [...html.matchAll(/<li data-kind="([^"]+)">[\s\S]*?<\/li>/g)];
  assert.deepEqual(links.map((l) => l[1]), findings.map((f) => f.kind));
  for (const l of links) for (const [, id] of l[0].matchAll(/href="#([\w-]+)"/g)) assert.ok(html.includes(`<section id="${id}">`), `anchor #${id} exists`);
});

test('waits: W in luna analyze slow (JSON, text) and on the page (totals, the waiting blame, the finding)', () => {
  const trace = join(dir, 'waits.trace');
  writeWaitingTrace(trace);
  const a = analysis(trace);
  assert.equal(a.t.W, WRITTEN.W);
  assert.equal(a.sum, a.tTotal);
  assert.ok(a.findings.some((f) => f.kind === 'waiting' && f.factor === 'W'), a.findings.map((f) => f.kind).join());
  const text = luna(['analyze', 'slow', '--window', '50ns', trace]).stdout;
  assert.match(text, /T_W\s+P_W/);
  assert.match(text, /^waiting 90 ns in 2 wait\(s\) for resources: barrier w\.fa:9 67%, request alloc x 33%$/m);
  assert.match(text, /^ {2}W \|[ ▁▂▃▄▅▆▇█]+\|$/m, 'W has its line in the dynamics');
  assert.match(text, /window from\s+P_S\s+P_L\s+P_O\s+P_W\s+P_U/);
  // windows of 50 ns × 2 workers: the request [20, 50), the barrier [50, 110), then nothing
  const pW = text.split('\n').filter((l) => /^ {2}\d+ ns\s+\d/.test(l)).map((l) => l.trim().split(/\s+/)[5]);
  assert.deepEqual(pW, ['30.0%', '50.0%', '10.0%', '0.0%', '0.0%']);
  const r = luna(['report', trace, '-o', '-']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`data-slow-total="W" data-run="0" data-ns="${WRITTEN.W}"`));
  assert.match(r.stdout, /<h3 id="blame-waiting">Waiting \(90 ns in 2 waits for shared resources\)/);
  assert.match(r.stdout, /<li data-kind="waiting">/);
});

test('the S charged to producers split by the producer\'s state: a bar and a table on the page, with the held-ready finding', () => {
  const rowsOf = (html: string): Record<string, number> =>
    Object.fromEntries([...html.matchAll(/<tr data-state="(\w+)" data-ns="([^"]+)">/g)].map((m) => [m[1]!, Number(m[2])]));
  for (const [name, chained, want] of [['held', false, HELD], ['chained', true, CHAINED]] as const) {
    const trace = join(dir, `${name}.trace`);
    writeHeldTrace(trace, { chained });
    const r = luna(['report', trace, '-o', '-']);
    assert.equal(r.status, 0, r.stderr);
    const html = r.stdout;
    assert.match(html, /<h3 id="blame-producer-state">While the producer was<\/h3>/);
    assert.deepEqual(rowsOf(html), { notReady: want.notReady, queued: want.queued, running: want.running, unknown: want.unknown });
    // time and share of the charged S in words, as the analysis prints them
    const row = (k: string): string => new RegExp(`<tr data-state="${k}"[^>]*>([\\s\\S]*?)</tr>`).exec(html)![1]!.replace(/<[^>]+>/g, '|');
    assert.match(row('running'), /\|50 ns\|+36 ?%\|/);
    assert.match(row(chained ? 'notReady' : 'queued'), /\|90 ns\|+64 ?%\|/);
    // the bar: one span for each state with time, as wide as its share
    const bar = [...html.matchAll(/<span data-state="(\w+)"[^>]*width:([\d.]+)%/g)].map((m) => [m[1], Number(m[2])]);
    assert.deepEqual(bar, chained ? [['notReady', 64.29], ['running', 35.71]] : [['queued', 64.29], ['running', 35.71]]);
    assert.equal(/<p class="held-ready">/.test(html), !chained, 'the finding under the split only when "queued" dominates');
    assert.equal(/<li data-kind="held-ready">/.test(html), !chained);
    assert.equal(/<li data-kind="sequential">/.test(html), chained);
    if (!chained) assert.match(html, /<p class="held-ready">S = 47\.5%[^<]*ready and not started for 90 ns/);
  }
});

test('the timeline data holds every fragment of the run on its lane, and the critical path marks', () => {
  const html = reportA();
  type P = Packed;
  const tl = (pageData(html).sections.timeline as { N: number; T: number; span: number; tick: number; f: { off: number[]; s: P; d: P; dtick: number }; crit: P; net: { off: number[] } }[])[0]!;
  assert.equal(tl.N, an.nodes);
  assert.equal(tl.T, an.threads);
  assert.equal(tl.f.off.length, an.nodes * an.threads + 1);
  assert.equal(tl.f.off.at(-1), an.cfs);
  // fragments per lane = the analysis' placement
  assert.deepEqual(tl.f.off.slice(1).map((v, i) => v - tl.f.off[i]!), an.placement.perThread);
  const s = unpack(tl.f.s) as Uint32Array, d = unpack(tl.f.d) as Uint32Array;
  assert.equal(s.length, an.cfs);
  assert.equal(d.length, an.cfs);
  // start deltas add up within each lane to times inside the run; the lanes' busy time is U + pre-emption
  let busy = 0;
  for (let lane = 0; lane + 1 < tl.f.off.length; lane++) {
    let at = 0;
    for (let k = tl.f.off[lane]!; k < tl.f.off[lane + 1]!; k++) { at += s[k]!; busy += d[k]! * tl.f.dtick; assert.ok(at * tl.tick <= tl.span + tl.tick); }
  }
  const expected = an.t.U + an.overhead.preempt;
  assert.ok(Math.abs(busy - expected) <= an.cfs + 1e-6 * expected, `fragments' wall time ${busy} vs U + pre-emption ${expected}`);
  const crit = unpack(tl.crit) as Int32Array;
  assert.ok(crit.length > 0 && crit.length <= an.criticalPath.cfs);
  for (const i of crit) assert.ok(i >= 0 && i < an.cfs);
  assert.ok(tl.net.off.at(-1)! > 0, 'DFs crossed between the two nodes');
});

test('a critical path of 12 002 steps is shown whole: every step in the table data and on the timeline', () => {
  const trace = join(dir, 'chain.trace');
  const run = luna(['run', '--threads', '1', '--trace', trace, join(ROOT, 'examples/chain/chain.fa'), '12000', '0']);
  assert.equal(run.status, 0, run.stderr);
  const a = analysis(trace);
  assert.equal(a.criticalPath.cfs, 12_002, 'start, 12 000 links and the check');
  assert.equal(a.criticalPath.steps, a.criticalPath.cfs);
  const html = luna(['report', trace, '-o', '-']).stdout;
  assert.match(html, /data-path-steps="12002" data-path-cfs="12002">All 12,002 steps are listed below and outlined on the timeline/);
  // one thread, one chain: the graph's floor is the chain itself, and the section says it
  assert.ok(a.floor, 'the floor is computed');
  assert.ok(Math.abs(a.floor.ns - a.criticalPath.length) <= 1e-9 * a.criticalPath.length + 1, `floor ${a.floor.ns} vs path ${a.criticalPath.length}`);
  assert.match(html, new RegExp(`this graph would take <b data-floor-ns="${a.floor.ns}">`));
  type P = Packed;
  const d = pageData(html);
  const steps = (d.sections.critical as { start: P; names: { bases: string[]; base: P; off: P; idx: P } }[])[0]!;
  const start = unpack(steps.start) as Float64Array;
  assert.equal(start.length, 12_002);
  for (let k = 1; k < start.length; k++) assert.ok(start[k]! >= start[k - 1]!, 'earliest first');
  // names as the program gives them: first, link[0] … link[11999], then the check
  const base = unpack(steps.names.base) as Int32Array, off = unpack(steps.names.off) as Int32Array, idx = unpack(steps.names.idx) as Int32Array;
  const name = (k: number): string => steps.names.bases[base[k]!] + Array.from(idx.subarray(off[k]!, off[k + 1]!), (i) => `[${i}]`).join('');
  assert.equal(name(0), 'first');
  assert.equal(name(1), 'link[0]');
  assert.equal(name(12_000), 'link[11999]');
  const crit = (d.sections.timeline as { crit: P }[])[0]!.crit;
  assert.equal(unpack(crit).length, 12_002, 'every step outlined on the timeline');
});

test('the page is self-contained: no external script, style, image or link', () => {
  const html = reportA();
  assert.match(html, /^<!doctype html>/);
  assert.doesNotMatch(html, /<script[^>]+src=/i);
  assert.doesNotMatch(html, /<link[^>]+href=/i);
  assert.doesNotMatch(html, /<img[^>]+src="?https?:/i);
  assert.ok(html.length > 500_000, 'ECharts is inlined');
});

test('two traces: compared side by side, A before and B after', () => {
  const out = join(dir, 'cmp.html');
  const r = luna(['report', traceA, traceB, '-o', out]);
  assert.equal(r.status, 0, r.stderr);
  const d = pageData(readFileSync(out, 'utf8'));
  assert.equal(d.runs.length, 2);
  assert.match(d.labels[0]!, /^A \(before\)/);
  assert.match(d.labels[1]!, /^B \(after\)/);
  assert.deepEqual([d.runs[0]!.slow.nodes, d.runs[0]!.slow.threads], [2, 1]);
  assert.deepEqual([d.runs[1]!.slow.nodes, d.runs[1]!.slow.threads], [1, 2]);
  assert.deepEqual(d.runs[1]!.slow.t, analysis(traceB).t);
  assert.equal((d.sections.timeline as unknown[]).length, 2);
  // the before/after table: B's wall time against A's
  const html = readFileSync(out, 'utf8');
  const m = /data-speedup="([^"]+)"/.exec(html);
  assert.ok(m, 'a before/after table');
  assert.ok(Math.abs(Number(m[1]) - d.runs[0]!.slow.tWall / d.runs[1]!.slow.tWall) < 1e-9);
});

test('without -o the report is report.html in the working directory', () => {
  const cwd = join(dir, 'cwd');
  mkdirSync(cwd);
  const r = luna(['report', traceA], cwd);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(existsSync(join(cwd, 'report.html')));
});

/** `luna analyze slow` of a run that did not complete: how it ended first, exit 4, the status in --json. */
function incompleteAnalysis(trace: string, status: string, message: RegExp): void {
  const text = luna(['analyze', 'slow', trace]);
  assert.equal(text.status, 4, text.stderr);
  const lines = text.stdout.split('\n');
  assert.match(lines[0]!, new RegExp(`^The run ${status === 'failed' ? 'failed' : 'hung'} after [0-9.]+ m?s \\(`), 'the first line says how the run ended');
  assert.match(lines[0]!, /every figure covers only the part of the run before it/);
  assert.match(text.stdout, message);
  assert.match(text.stderr, new RegExp(`the run did not complete \\(${status}\\)`));
  const json = luna(['analyze', 'slow', '--json', trace]);
  assert.equal(json.status, 4);
  const a = JSON.parse(json.stdout) as Analysis;
  assert.equal(a.run.status, status);
  assert.equal(a.run.complete, false);
  assert.match(a.run.message ?? '', message);
  assert.equal(a.findings[0]!.kind, 'run-ended', 'the first finding says how the run ended');
  assert.equal(a.advice[0], a.findings[0]!.text);
}

/** The report of such a run: its first section opens with how the run ended, the message's lines kept. */
function incompletePage(trace: string, status: string): string {
  const html = luna(['report', trace, '-o', '-']).stdout;
  const first = html.indexOf('<section id="');
  assert.equal(html.slice(first, first + 22), '<section id="summary">', 'the run section comes first');
  const banner = /<div class="err run-ended" data-run-ended="([a-z]+)"><b>([^<]*)<\/b><pre class="msg">([^<]*)<\/pre>/.exec(html);
  assert.ok(banner, 'a banner saying how the run ended');
  assert.ok(banner.index < html.indexOf('<table>', first), 'before the run table');
  assert.equal(banner[1], status);
  assert.match(banner[2]!, /every figure covers only the part of the run before it/);
  assert.match(html, new RegExp(`data-status="${status}">${status}</span><pre class="msg">`));
  assert.doesNotMatch(html, /data-status="completed"/);
  assert.match(html, /<li data-kind="run-ended">/);
  return banner[3]!;
}

test('a run that failed: the analysis and the report say so first, with the error the trace recorded', () => {
  const src = join(dir, 'fail');
  mkdirSync(src);
  writeFileSync(join(src, 'fail.fa'), 'import c_init(int `v, name `x) as init;\nimport c_boom(value `a) as boom;\nsub main()\n{\n    df a;\n    init(1, a);\n    boom(a);\n}\n');
  writeFileSync(join(src, 'ucodes.ts'), "export function c_init(v: number, x: { setInt(v: number): void }): void { x.setInt(v); }\nexport function c_boom(): void { throw new Error('boom on purpose'); }\n");
  const trace = join(dir, 'fail.trace');
  const r = luna(['run', '--trace', trace, join(src, 'fail.fa')], src);
  assert.equal(r.status, 1, r.stderr);
  incompleteAnalysis(trace, 'failed', /boom on purpose/);
  assert.match(incompletePage(trace, 'failed'), /boom on purpose/);
});

test('a run that hung: the analysis and the report say so first, the hang report line by line', () => {
  const trace = join(dir, 'hang.trace');
  const r = luna(['run', '--threads', '2', '--trace', trace, join(ROOT, 'test/runtime/programs/hang/hang.fa')]);
  assert.equal(r.status, 1, r.stderr);
  incompleteAnalysis(trace, 'hung', /the program hangs/);
  const text = luna(['analyze', 'slow', trace]).stdout.split('\n');
  // the hang report's lines stay lines: one per waiting CF
  assert.ok(text.some((l) => /^ +\| +CF w\[2\] .* waits for x\[2\]$/.test(l)), text.slice(0, 8).join('\n'));
  assert.ok(text.some((l) => /^ +\| +CF v .* waits for z$/.test(l)));
  const msg = incompletePage(trace, 'hung').split('\n');
  assert.match(msg[0]!, /^the program hangs/);
  assert.ok(msg.some((l) => /CF w\[3\] .* waits for x\[3\]$/.test(l)), msg.join('\n'));
});

test('bad inputs: a clear message, a non-zero exit, no stack trace', () => {
  const cases: { args: string[]; re: RegExp }[] = [
    { args: ['report', join(dir, 'missing')], re: /no trace directory/ },
    { args: ['report', join(dir, 'a.trace', 'manifest.json')], re: /is a file; a trace is a directory/ },
    { args: ['report', traceA, '-o', join(dir, 'no', 'such', 'dir', 'r.html')], re: /no directory .*create it first/ },
    { args: ['report', traceA, '-o', dir], re: /is a directory; give a file name/ },
    { args: ['report', traceA, traceB, traceA], re: /one trace directory, or two/ },
  ];
  const empty = join(dir, 'empty');
  mkdirSync(empty);
  cases.push({ args: ['report', empty, '-o', join(dir, 'x.html')], re: /not a trace directory/ });
  for (const c of cases) {
    const r = luna(c.args);
    assert.notEqual(r.status, 0, `${c.args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, c.re);
    noStack(r.stderr);
  }
  assert.ok(!existsSync(join(dir, 'x.html')), 'nothing written for a bad trace');
});

test('a damaged trace is flagged at the top of the page and in the exit status, as analyze slow does', () => {
  const bad = join(dir, 'damaged.trace');
  cpSync(traceA, bad, { recursive: true });
  // cut the last records of a worker's file in the middle of a record
  const f = readdirSync(bad).filter((n) => n.endsWith('.lt')).map((n) => join(bad, n)).sort((x, y) => statSync(y).size - statSync(x).size)[0]!;
  truncateSync(f, statSync(f).size - 7);
  const a = luna(['analyze', 'slow', '--json', bad]);
  assert.equal(a.status, 3, a.stderr);
  const damage = (JSON.parse(a.stdout) as Analysis).damage;
  assert.ok(damage.total > 0);
  const out = join(dir, 'damaged.html');
  const r = luna(['report', bad, '-o', out]);
  assert.equal(r.status, 3, r.stderr);
  assert.match(r.stderr, /trace damage in .*damaged\.trace/);
  noStack(r.stderr);
  const html = readFileSync(out, 'utf8');
  assert.deepEqual(pageData(html).runs[0]!.slow.damage, damage);
  const at = html.indexOf(`data-damage="${damage.total}"`);
  assert.ok(at > 0, 'the damage banner is on the page');
  assert.ok(at < html.indexOf('<section id="slow">'), 'before the numbers');
});
