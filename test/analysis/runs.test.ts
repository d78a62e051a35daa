// The analysis of real traced runs (bin/luna run --trace into a temp dir, then bin/luna analyze
// slow): nodes that got no work, worker threads that ran nothing, the machines and their CPUs
// in the manifest, oversubscription, and the text output's windows and model rows.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, hostname, tmpdir } from 'node:os';
import { cpuSet } from '../../src/core/cpus.js';
import { join } from 'node:path';
import type { Finding, SlowReport } from '../../src/analysis/slow/index.js';
import type { TraceManifest } from '../../src/trace/manifest.js';

type Json = SlowReport & { advice: string[]; findings: Finding[] };

function luna(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/luna', ...args], { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

function traced(t: { after(fn: () => void): void }, runArgs: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'luna-slow-run-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const trace = join(dir, 'trace');
  const r = luna(['run', '--trace', trace, ...runArgs]);
  assert.equal(r.status, 0, r.stderr);
  return trace;
}

function analyze(trace: string, ...opts: string[]): Json {
  const r = luna(['analyze', 'slow', '--json', ...opts, trace]);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Json;
}

const manifestOf = (trace: string): TraceManifest => JSON.parse(readFileSync(join(trace, 'manifest.json'), 'utf8')) as TraceManifest;

test('matmul on 2 nodes without locators: node 1 got no work, and the advice is to place fragments', (t) => {
  // 2 × 2 blocks of 128: a block product (128³ multiply-adds) outweighs a gather (a 512 KiB
  // copy) ~5× here; with blocks of 32 the 16 gathers of the whole 128 KiB matrix came within
  // timing noise of the 64 products and a slow machine named `collect`
  const trace = traced(t, ['--nodes', '2', '--threads', '1', 'examples/matmul/matmul.fa', '256', '2']);
  const r = analyze(trace);
  assert.deepEqual(r.placement.idleNodes, [1]);
  assert.equal(r.placement.perNode[0], r.cfs);
  assert.ok(r.perNode[1]!.S >= 0.999 * r.tWall, 'node 1 starved the whole run');
  const kinds: string[] = r.findings.map((f) => f.kind);
  const idle = r.findings.find((f) => f.kind === 'idle-nodes');
  assert.ok(idle, kinds.join());
  assert.ok(kinds.indexOf('idle-nodes') < Math.min(...['sequential', 'tail'].map((k) => (kinds.includes(k) ? kinds.indexOf(k) : Infinity))),
    `the placement finding comes before any advice on the data split: ${kinds.join()}`);
  assert.match(idle.text, /^Node 1 ran no fragment: all \d+ CFs ran on node 0/);
  assert.match(idle.text, /`locator_cyclic: e;`/);
  assert.match(idle.text, /here `prod`/, 'names the statement doing the work');
  assert.deepEqual(r.advice, r.findings.map((f) => f.text));
  const text = luna(['analyze', 'slow', trace]).stdout;
  assert.match(text, /CFs per node: 0: \d+, 1: 0 {2}\(no fragment on node\(s\) 1\)/);
});

test('the same product with locators spreads over both nodes: no idle node', (t) => {
  const trace = traced(t, ['--nodes', '2', '--threads', '1', 'examples/matmul/matmul_cyclic.fa', '64', '4']);
  const r = analyze(trace);
  assert.deepEqual(r.placement.idleNodes, []);
  assert.ok(r.placement.perNode.every((c) => c > 0), JSON.stringify(r.placement.perNode));
  assert.ok(!r.findings.some((f) => f.kind === 'idle-nodes'));
  // block rows 1 and 3 (initA, prod, first, accum: 4 + 4·4 + 4 + 4·3 CFs each) ran on node 1
  assert.equal(r.placement.perNode[1], 2 * (4 + 16 + 4 + 12));
});

test('the manifest records the machine and its CPUs; more workers than CPUs is reported as oversubscription', (t) => {
  const cpus = availableParallelism();
  const trace = traced(t, ['--nodes', '2', '--threads', String(cpus), 'examples/seed004/seed004_cyclic.fa', '8', '4', '3']);
  const m = manifestOf(trace);
  const machine = cpuSet().machine;
  assert.deepEqual(m.machines, [{ host: hostname(), cores: cpus, nodes: [0, 1], cpus: machine, nodeCpus: [cpus, cpus] }]);
  assert.equal(m.cores, cpus);
  const r = analyze(trace);
  assert.deepEqual(r.machines, [{ host: hostname(), cores: cpus, cpus: machine, nodes: [0, 1], nodeCpus: [cpus, cpus], workers: 2 * cpus, oversubscription: 2 }]);
  assert.equal(r.cores, 2 * cpus, '`cores` stays the worker threads the model accounts for');
  const over = r.findings.find((f) => f.kind === 'oversubscribed');
  assert.ok(over, r.findings.map((f) => f.kind).join());
  assert.match(over.text, new RegExp(`= ${2 * cpus} workers \\(and 2 system threads\\) on ${cpus} CPUs?: oversubscribed 2\\.0×`));
  assert.ok(!r.findings.some((f) => f.kind === 'fine-grained'), 'oversubscription is not blamed on the fragment size');
});

test('a single chain on 2 threads: the idle worker is a parallelism finding, not a tail; --window and --model in the text', (t) => {
  const trace = traced(t, ['--threads', '2', 'examples/chain/chain.fa', '200', '100']);
  // a one-node run records its machine from the start
  assert.deepEqual(manifestOf(trace).machines, [{ host: hostname(), cores: availableParallelism(), nodes: [0], cpus: cpuSet().machine, nodeCpus: [availableParallelism()] }]);
  const r = analyze(trace);
  assert.equal(r.placement.idleThreads.length, 1, JSON.stringify(r.placement));
  const idle = r.placement.idleThreads[0]!;
  const f = r.findings.find((x) => x.kind === 'idle-threads');
  assert.ok(f, r.findings.map((x) => x.kind).join());
  assert.match(f.text, new RegExp(`^Worker thread 0\\.${idle.thread} ran no fragment`));
  assert.match(f.text, /less parallelism than threads/);
  assert.ok(!r.advice.some((a) => /tail after workers' last CFs/.test(a)), r.advice.join('\n'));
  assert.ok(r.placement.idleNs >= 0.999 * r.tWall);

  const rows = (text: string) => text.split('\n').filter((l) => /^ {2}\d+(\.\d+)? (ns|µs|ms|s)\s+\d/.test(l)).length;
  for (const ms of [5, 20]) {
    const text = luna(['analyze', 'slow', '--window', `${ms}ms`, trace]).stdout;
    assert.match(text, new RegExp(`dynamics: \\d+ windows of ${ms}\\.000 ms`));
    assert.equal(rows(text), Math.ceil(r.tWall / (ms * 1e6)), text);
  }
  assert.doesNotMatch(luna(['analyze', 'slow', trace]).stdout, /window from/);
  const models = (text: string) => text.split('\n').filter((l) => /^(kireev2024|litvinov2017) /.test(l)).map((l) => l.split(' ')[0]);
  assert.deepEqual(models(luna(['analyze', 'slow', '--model', 'litvinov2017', trace]).stdout), ['litvinov2017']);
  assert.deepEqual(models(luna(['analyze', 'slow', '--model', 'litvinov2017', '--compare', trace]).stdout).sort(), ['kireev2024', 'litvinov2017']);
  const json = analyze(trace, '--model', 'litvinov2017');
  assert.equal(json.compare, false);
  assert.equal(json.units.tWall, 'ns');
});
