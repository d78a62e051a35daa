// Trace analysis is never silently wrong: one real trace (2 nodes, made once with bin/luna run
// --trace) is damaged in ~50 seeded ways — bit flips, truncations, header-only files (a node
// killed at once), deleted files, manifest fields broken — and analysed. The analysis must end
// with a documented outcome (a report, a TraceFormatError: exit 1, a ManifestError: exit 2),
// every damage it detects counted, and an undamaged-looking report must be sane: every SLOW
// share in [0, 1] and the five summing to 1. A few of them also go through the real CLI (exit
// code in {0, 1, 2, 3, 4}, no stack trace, the damage summary before the analysis, `damage` in the
// JSON). Seed: LUNA_FUZZ_SEED (default 1); a failure names the seed and the corruption.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { explain, luna, ROOT } from '../cli/helpers.js';
import { analyzeSlowTrace, type SlowReport } from '../../src/analysis/slow/index.js';
import { TraceFormatError, HEADER_BYTES } from '../../src/trace/format.js';
import { ManifestError } from '../../src/trace/manifest-reader.js';
import { rng } from '../lang/generators.js'; // seeded, so a failing corruption can be replayed

let work = '';
let base = '';
before(async () => {
  work = mkdtempSync(join(tmpdir(), 'luna-trace-damage-'));
  base = join(work, 'T');
  const prog = join(ROOT, 'test', 'trace', 'programs', 'spread', 'spread.fa');
  const r = await luna(['run', '--nodes', '2', '--threads', '2', '--trace', base, prog, '12'], work);
  assert.equal(r.status, 0, explain(r));
});
after(() => { if (work) rmSync(work, { recursive: true, force: true }); });


type Corruption = (dir: string, r: () => number) => string;
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const traceFiles = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith('.lt')).sort();
const withRecords = (dir: string): string[] => traceFiles(dir).filter((f) => statSync(join(dir, f)).size > HEADER_BYTES);

function flipBits(dir: string, r: () => number, n: number, headerToo: boolean): string {
  const f = pick(r, withRecords(dir));
  const p = join(dir, f);
  const b = readFileSync(p);
  const at: string[] = [];
  for (let i = 0; i < n; i++) {
    const lo = headerToo ? 0 : HEADER_BYTES;
    const off = lo + Math.floor(r() * (b.length - lo));
    const bit = Math.floor(r() * 8);
    b[off] = b[off]! ^ (1 << bit);
    at.push(`${off}.${bit}`);
  }
  writeFileSync(p, b);
  return `flip ${f} ${at.join(',')}`;
}

function editManifest(dir: string, edit: (m: Record<string, unknown>) => void): void {
  const p = join(dir, 'manifest.json');
  const m = JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;
  edit(m);
  writeFileSync(p, JSON.stringify(m));
}

const CORRUPTIONS: Corruption[] = [
  (d, r) => flipBits(d, r, 1, false),
  (d, r) => flipBits(d, r, 1, false),
  (d, r) => flipBits(d, r, 1, false),
  (d, r) => flipBits(d, r, 4, false),
  (d, r) => flipBits(d, r, 1, true),
  (d, r) => {
    const f = pick(r, withRecords(d));
    const size = statSync(join(d, f)).size;
    const to = Math.floor(r() * size);
    truncateSync(join(d, f), to);
    return `truncate ${f} to ${to}`;
  },
  (d, r) => {
    // a node killed before it wrote a record: every file of it holds only its header
    const node = pick(r, [0, 1]);
    for (const f of traceFiles(d)) if (f.startsWith(`node${node}.`)) truncateSync(join(d, f), HEADER_BYTES);
    return `header-only node ${node}`;
  },
  (d, r) => {
    const f = pick(r, traceFiles(d));
    unlinkSync(join(d, f));
    return `delete ${f}`;
  },
  (d, r) => {
    const field = pick(r, ['codes', 'files', 'nodes', 'threads', 'clock', 'sites', 'args', 'program', 'versions', 'status']);
    const how = pick(r, ['null', 'delete', 'string', 'negative']);
    editManifest(d, (m) => {
      if (how === 'null') m[field] = null;
      else if (how === 'delete') delete m[field];
      else if (how === 'string') m[field] = 'x';
      else m[field] = -1;
    });
    return `manifest ${field} ${how}`;
  },
  (d, r) => {
    const n = pick(r, [1, 3]);
    editManifest(d, (m) => { m.nodes = n; });
    return `manifest nodes ${n}`;
  },
  (d, r) => {
    const n = pick(r, [1, 2, 5]);
    editManifest(d, (m) => { m.threads = n; });
    return `manifest threads ${n}`;
  },
];

const INPUTS = Number(process.env.LUNA_FUZZ_INPUTS ?? 50);
const SEED = Number(process.env.LUNA_FUZZ_SEED ?? 1);

type Outcome = { kind: 'report'; report: SlowReport } | { kind: 'format' | 'manifest'; message: string };

function analyse(dir: string): Outcome {
  try {
    return { kind: 'report', report: analyzeSlowTrace(dir) };
  } catch (e) {
    if (e instanceof ManifestError) return { kind: 'manifest', message: e.message };
    if (e instanceof TraceFormatError) return { kind: 'format', message: e.message };
    throw e;
  }
}

function assertSane(rep: SlowReport, what: string): void {
  const shares = Object.entries(rep.p);
  for (const [f, v] of shares) assert.ok(Number.isFinite(v) && v >= -1e-9 && v <= 100 + 1e-9, `${what}: P_${f} = ${v}`);
  for (const [f, v] of Object.entries(rep.t)) assert.ok(Number.isFinite(v) && v >= 0, `${what}: T_${f} = ${v}`);
  if (rep.tTotal > 0) {
    const sum = shares.reduce((a, [, v]) => a + v, 0);
    assert.ok(Math.abs(sum - 100) < 0.5, `${what}: the shares sum to ${sum} %`);
  }
}

test('the undamaged trace: no damage, sane shares', () => {
  const o = analyse(base);
  assert.equal(o.kind, 'report');
  const rep = (o as { report: SlowReport }).report;
  assert.equal(rep.damage.total, 0, JSON.stringify(rep.damage));
  assert.deepEqual(rep.missingNodes, []);
  assertSane(rep, 'undamaged');
});

test(`${INPUTS} seeded corruptions (seed ${SEED}): documented outcomes only; reports without damage are sane`, (t) => {
  const tally: Record<string, number> = {};
  for (let k = 0; k < INPUTS; k++) {
    const seed = SEED * 1000 + k;
    const r = rng(seed);
    const dir = join(work, `c${k}`);
    rmSync(dir, { recursive: true, force: true });
    cpSync(base, dir, { recursive: true });
    const what = `${CORRUPTIONS[k % CORRUPTIONS.length]!(dir, r)} (seed ${seed}; replay: LUNA_FUZZ_SEED=${SEED} LUNA_FUZZ_INPUTS=${k + 1})`;
    let o: Outcome;
    try { o = analyse(dir); } catch (e) {
      assert.fail(`${what}: the analysis crashed: ${e instanceof Error ? e.stack : String(e)}`);
    }
    if (o.kind === 'report') {
      const rep = o.report;
      const key = rep.damage.total > 0 ? 'damaged' : 'clean';
      tally[key] = (tally[key] ?? 0) + 1;
      assert.equal(rep.damage.total, Object.values(rep.damage.counts).reduce((a, b) => a + (b ?? 0), 0), what);
      if (rep.damage.total === 0) assertSane(rep, what);
      else for (const v of Object.values(rep.p)) assert.ok(!Number.isNaN(v), `${what}: NaN share`);
      for (const n of rep.missingNodes) assert.ok(rep.damage.counts['missing-node']! > 0, what);
    } else {
      tally[o.kind] = (tally[o.kind] ?? 0) + 1;
      assert.match(o.message, /^\S+/, what);
      if (o.kind === 'manifest') assert.match(o.message, /manifest\.json: field "[^"]+"/, what);
    }
    if (k >= 5) rmSync(dir, { recursive: true, force: true }); // the CLI test below reads c0..c4
  }
  t.diagnostic(`outcomes: ${JSON.stringify(tally)}`);
  // the corruptions reach every outcome: damage is detected, manifests are refused
  assert.ok((tally.damaged ?? 0) > 0 && (tally.manifest ?? 0) > 0, JSON.stringify(tally));
});

test('through the CLI: exit code 0, 1, 2, 3 or 4, no stack trace, damage summary first and in --json', async () => {
  const dirs = [0, 1, 2, 3, 4].map((k) => join(work, `c${k}`)).filter((d) => existsSync(d));
  // a node killed at once (header-only files) and a damaged manifest, whatever the seed made
  const killed = join(work, 'killed');
  cpSync(base, killed, { recursive: true });
  for (const f of traceFiles(killed)) if (f.startsWith('node1.')) truncateSync(join(killed, f), HEADER_BYTES);
  const codes = join(work, 'codes-null');
  cpSync(base, codes, { recursive: true });
  editManifest(codes, (m) => { m.codes = null; });
  for (const d of [...dirs, killed, codes]) {
    for (const args of [['analyze', 'slow', d], ['analyze', 'slow', '--json', d]]) {
      const r = await luna(args, work);
      assert.ok([0, 1, 2, 3, 4].includes(r.status ?? -1), explain(r));
      assert.doesNotMatch(r.stderr, /internal error|^\s+at /m, explain(r));
      if (r.status === 0 || r.status === 3) {
        if (args.includes('--json')) {
          const j = JSON.parse(r.stdout) as SlowReport;
          assert.equal(j.damage.total > 0, r.status === 3, explain(r));
          assert.equal(j.run.complete, true, explain(r));
        } else assert.match(r.stdout, /^SLOW analysis/, explain(r));
      }
      // a manifest without its status and a cut programFinish: the run's end is unknown
      if (r.status === 4) assert.match(r.stderr, /the run did not complete \(/, explain(r));
      if (r.status === 3) assert.match(r.stderr, /^luna: trace damage in .*: \d+ item\(s\) dropped or corrected \(/, explain(r));
    }
  }
  const k = await luna(['analyze', 'slow', '--json', killed], work);
  assert.equal(k.status, 3, explain(k));
  const j = JSON.parse(k.stdout) as SlowReport;
  assert.deepEqual(j.missingNodes, [1]);
  assert.equal(j.damage.counts['missing-node'], 1);
  assert.equal(j.cores, j.threads, 'the missing node\'s workers are left out of the totals');
  assertSane(j, 'killed node');
  const text = await luna(['analyze', 'slow', killed], work);
  assert.match(text.stdout, /^node 1 +missing/m, explain(text));
  const c = await luna(['analyze', 'slow', codes], work);
  assert.equal(c.status, 2, explain(c));
  assert.match(c.stderr, /^luna: error: .*manifest\.json: field "codes": expected array, got null\n$/, explain(c));
  for (const sub of [['export', 'perfetto', '-o', join(work, 'p.json')], ['export', 'tables', '-o', join(work, 'tabs')]]) {
    const e = await luna([...sub, codes], work);
    assert.equal(e.status, 2, explain(e));
    assert.match(e.stderr, /field "codes": expected array, got null/, explain(e));
    const m = await luna([...sub, killed], work);
    assert.equal(m.status, 3, explain(m));
    assert.match(m.stderr, /^luna: trace damage in .*missing-node 1/m, explain(m));
  }
});
