// Advice may only name what the tool offers. Every option an advice text names must be in the
// real `luna` help, every behaviour rule in docs/language.md; the feature tables the advice
// draws from are checked against the same lists, and the advice source names no option or rule
// except through them. The texts come from reports that produce every kind of finding.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { analyzeSlow, FINDING_KINDS, interpretFindings, OPTION, RULE, type SlowReport } from '../../src/analysis/slow/index.js';
import { simulate } from '../../src/analysis/sim/simulate.js';
import { TB, manifest, sideThenChain } from './tb.js';

function help(...args: string[]): string {
  const r = spawnSync(process.execPath, ['bin/luna', ...args, '--help'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

/** Options of the commands advice may point at, from the CLI's own help. */
function cliOptions(): Set<string> {
  const text = [help('run'), help('analyze', 'slow'), help('export', 'perfetto')].join('\n');
  return new Set(text.match(/--[a-z][a-z-]*/g));
}

/**
 * Options of the cluster launchers advice may name: mpirun's from its own help (when Open MPI is
 * installed), srun's from the Slurm options docs/cluster.md documents (no Slurm here to ask).
 */
function launcherOptions(): Map<string, Set<string> | null> {
  const mpi = spawnSync('mpirun', ['--allow-run-as-root', '--help', 'binding'], { encoding: 'utf8' });
  const map = spawnSync('mpirun', ['--allow-run-as-root', '--help', 'mapping'], { encoding: 'utf8' });
  const mpirun = mpi.status === 0 ? new Set(`${mpi.stdout}${map.stdout}`.match(/--[a-z][a-z-]*/g)) : null;
  const cluster = readFileSync('docs/cluster.md', 'utf8');
  const srun = new Set([...cluster.matchAll(/`srun [^`]*`/g)].flatMap((m) => m[0].match(/--[a-z][a-z-]*/g) ?? []));
  return new Map([['mpirun', mpirun], ['srun', srun]]);
}

/** Subcommands of `luna`, from its help. */
function cliCommands(): Set<string> {
  const text = help();
  const cmds = text.slice(text.indexOf('Commands:')).match(/^ {2}([a-z]+)/gm) ?? [];
  return new Set(cmds.map((c) => c.trim()));
}

/** Behaviour rules of the language reference (the `#### 4.4.x \`rule …\`` headings and §9.1). */
function languageRules(): Set<string> {
  const doc = readFileSync('docs/language.md', 'utf8');
  const rules = new Set<string>();
  for (const m of doc.matchAll(/^#{3,4} (?:4\.4|9)\.\d+ `([a-z_]+)/gm)) rules.add(m[1]!);
  return rules;
}

/** Names that stand for the program's own things in a report (labels, codes, DFs, hosts). */
function programNames(r: SlowReport): Set<string> {
  const s = new Set<string>();
  for (const x of r.perLabel) s.add(x.label);
  for (const x of r.perCode) s.add(x.name);
  for (const list of [r.blame.starvation.byLabel, r.blame.starvation.byCode, r.blame.latency.byDfBase, r.blame.latency.byProducerLabel, r.criticalPath.byLabel]) {
    for (const c of list) s.add(c.key);
  }
  for (const m of r.machines) s.add(m.host);
  return s;
}

// ------------------------------------------------------------------ reports of every kind

function chainOnOneLane(threads: number): SlowReport {
  const tb = new TB(1);
  let t = 0;
  for (let i = 0; i < 20; i++) {
    tb.cf({ node: 0, thread: 1, cf: i + 1, label: 'link', start: t + 5, end: t + 100, inputs: i > 0 ? [`x[${i}]`] : [] });
    tb.computed(0, `x[${i + 1}]`, i + 1, t + 100);
    t += 100;
  }
  return analyzeSlow(manifest(1, threads), tb.done(t));
}

function chainRoundRobin(): SlowReport {
  const tb = new TB(1);
  let t = 0;
  for (let i = 0; i < 20; i++) {
    tb.cf({ node: 0, thread: 1 + (i % 4), cf: i + 1, label: 'solve', start: t + 10, end: t + 1010, inputs: i > 0 ? [`A[${i - 1}]`] : [] });
    tb.computed(0, `A[${i}]`, i + 1, t + 1010);
    t += 1010;
  }
  return analyzeSlow(manifest(1, 4), tb.done(t));
}

function allOnNode0(): SlowReport {
  const tb = new TB(2);
  for (let i = 0; i < 20; i++) tb.cf({ node: 0, thread: 1 + (i % 2), cf: i + 1, label: 'work', start: Math.floor(i / 2) * 100, end: Math.floor(i / 2) * 100 + 100 });
  return analyzeSlow(manifest(2, 2), tb.done(1000));
}

function oversubscribed(cores: number): SlowReport {
  const tb = new TB(2);
  let cf = 1;
  for (let node = 0; node < 2; node++) {
    for (let lane = 1; lane <= 2; lane++) for (let i = 0; i < 10; i++) tb.cf({ node, thread: lane, cf: cf++, label: 'work', start: i * 100 + 40, end: i * 100 + 100, cpu: 30 });
  }
  return analyzeSlow({ ...manifest(2, 2), machines: [{ host: 'box', cores, nodes: [0, 1] }] }, tb.done(1000));
}

function preempted(): SlowReport {
  const tb = new TB(1);
  for (let i = 0; i < 10; i++) tb.cf({ node: 0, thread: 1, cf: i + 1, label: 'work', start: i * 100, end: i * 100 + 100, cpu: 20 });
  return analyzeSlow({ ...manifest(1, 1), machines: [{ host: 'box', cores: 2, nodes: [0] }] }, tb.done(1000));
}

function waiting(): SlowReport {
  const tb = new TB(1);
  for (let i = 0; i < 10; i++) {
    tb.cf({ node: 0, thread: 1, cf: i + 1, label: 'push', start: i * 100, end: i * 100 + 100, cpu: 20 })
      .wait({ node: 0, thread: 1, cf: i + 1, kind: 1, resource: 'particles[0]', start: i * 100 + 10, end: i * 100 + 90, cpu: 0 });
  }
  return analyzeSlow(manifest(1, 1), tb.done(1000));
}

function latency(): SlowReport {
  const tb = new TB(2);
  let t = 0;
  for (let i = 0; i < 10; i++) {
    for (const [chain, node] of [['B', i % 2], ['C', 1 - (i % 2)]] as const) {
      const cf = 2 * i + (chain === 'B' ? 1 : 2);
      tb.cf({ node, thread: 1, cf, label: 'step', start: t, end: t + 10, inputs: i > 0 ? [`${chain}[${i - 1}]`] : [] });
      tb.computed(node, `${chain}[${i}]`, cf, t + 10);
      tb.transfer(`${chain}[${i}]`, node, 1 - node, t + 11, t + 1100);
    }
    t += 1100;
  }
  return analyzeSlow(manifest(2, 1), tb.done(t));
}

/** Node 0 idles long on a slow producer of node 1; node 1 is busy. */
function unevenNodes(): SlowReport {
  const tb = new TB(2);
  tb.cf({ node: 1, thread: 1, cf: 1, label: 'slow', start: 0, end: 900 }).computed(1, 'y[0]', 1, 900).transfer('y[0]', 1, 0, 900, 900);
  tb.cf({ node: 0, thread: 1, cf: 2, label: 'use', start: 900, end: 1000, inputs: ['y[0]'] });
  tb.cf({ node: 1, thread: 1, cf: 3, label: 'more', start: 900, end: 1000 });
  return analyzeSlow(manifest(2, 1), tb.done(1000));
}

/** Wide graph, all lanes used, but the critical path ran last: the order finding. */
function badOrder(): SlowReport {
  const tb = new TB(1);
  const t = sideThenChain(tb);
  tb.cf({ node: 0, thread: 2, cf: 40, label: 'side', start: 400, end: 1500 });
  return analyzeSlow(manifest(1, 2), tb.done(t));
}

/** The round-robin chain, its producers said to be mostly ready and not started: the held-ready finding. */
function heldReady(): SlowReport {
  const r = chainRoundRobin(), st = r.blame.starvation, n = st.total;
  return { ...r, blame: { ...r.blame, starvation: { ...st, byProducerState: { notReady: 0.1 * n, queued: 0.8 * n, running: 0.1 * n, unknown: 0 } } } };
}

function litvinov(): SlowReport {
  const tb = new TB(1)
    .cf({ node: 0, thread: 1, cf: 1, label: 'P', start: 5, end: 100, cpu: 55 }).computed(0, 'x', 1, 100)
    .cf({ node: 0, thread: 2, cf: 2, label: 'M', start: 110, end: 120, inputs: ['x'] });
  return analyzeSlow(manifest(1, 2), tb.done(120), { compare: true });
}

function simulated(): SlowReport[] {
  const out: SlowReport[] = [];
  for (let seed = 1; seed <= 40; seed++) {
    const sim = simulate({ seed, nodes: 1 + (seed % 3), threads: 1 + (seed % 4), cfs: 30 + seed * 3, hopProb: 0.3, migrateProb: 0.3 });
    out.push(analyzeSlow(sim.manifest, sim.events, { compare: seed % 2 === 0 }));
  }
  return out;
}

/** Two ranks a launcher bound to one CPU each, one oversubscribed machine: under mpirun and srun. */
function launched(launcher: string): SlowReport[] {
  const bound = oversubscribed(2);
  return [
    { ...bound, launcher, threads: 1, machines: [{ ...bound.machines[0]!, nodeCpus: [1, 1], cpus: 2, workers: 2, oversubscription: 1 }] },
    { ...oversubscribed(1), launcher },
  ];
}

function reports(): SlowReport[] {
  const base = [
    chainOnOneLane(2), chainRoundRobin(), allOnNode0(), oversubscribed(2), oversubscribed(1), oversubscribed(8), preempted(), waiting(),
    latency(), unevenNodes(), badOrder(), litvinov(), ...simulated(), ...launched('mpirun'), ...launched('srun'), ...launched('local'),
    heldReady(),
  ];
  // a report of a damaged trace (coverage below 1) goes through the same interpretation
  return [...base, { ...base[0]!, coverage: 0.8, warnings: ['trace: node0.thread1.lt: truncated'] },
    // DFs held to the end, their req_count never reached
    { ...base[0]!, unspent: { dfs: 5, bytes: 17e6, largest: [0, 1, 2, 3].map((p) => ({ df: `Q[2][${p}]`, node: p % 2, left: 18, bytes: 4.24e6 })) } },
    // runs that did not complete go through it too, their end said first
    ...(['hung', 'failed', 'lost', 'running'] as const).map((status) => ({ ...base[2]!, run: { status, message: 'the program hangs: nothing can run\n  CF w[2] waits for x[2]', complete: false } }))];
}

// ------------------------------------------------------------------ the checks

test('the feature tables name only options of the real CLI and rules of the language reference', () => {
  const options = cliOptions(), rules = languageRules();
  assert.ok(options.has('--threads') && rules.has('locator_cyclic'), 'the lists were read');
  for (const o of Object.values(OPTION)) assert.ok(options.has(o), `advice may name ${o}, which luna's help does not list`);
  for (const r of Object.values(RULE)) assert.ok(rules.has(r), `advice may name the rule ${r}, which docs/language.md does not define`);
});

test('every advice text names only existing options, commands and rules', () => {
  const options = cliOptions(), rules = languageRules(), commands = cliCommands(), launchers = launcherOptions();
  const seen = new Set<string>();
  let texts = 0;
  for (const r of reports()) {
    const own = programNames(r);
    for (const f of interpretFindings(r)) {
      seen.add(f.kind);
      texts++;
      // a launcher's options appear only in a quoted command of that launcher, checked against it
      const ofLaunchers = [...f.text.matchAll(/`(mpirun|srun) ([^`]+)`/g)];
      for (const [, launcher, rest] of ofLaunchers) {
        const known = launchers.get(launcher!);
        for (const o of rest!.match(/--[a-z][a-z-]*/g) ?? []) if (known) assert.ok(known.has(o), `${f.kind}: names ${launcher} ${o}, which ${launcher === 'mpirun' ? 'mpirun --help' : 'docs/cluster.md'} does not list: ${f.text}`);
      }
      for (const o of f.text.replace(/`(mpirun|srun) [^`]+`/g, '').match(/--[a-z][a-z-]*/g) ?? []) assert.ok(options.has(o), `${f.kind}: names ${o}, not an option of luna: ${f.text}`);
      for (const m of f.text.matchAll(/`([^`]+)`/g)) {
        const quoted = m[1]!;
        if (own.has(quoted)) continue; // the program's own names
        const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(quoted)?.[0] ?? '';
        if (word === 'mpirun' || word === 'srun') continue; // checked above
        if (word === 'luna') {
          const cmd = quoted.split(/\s+/)[1] ?? '';
          assert.ok(commands.has(cmd), `${f.kind}: names the command luna ${cmd}: ${f.text}`);
        } else if (!quoted.startsWith('--')) {
          assert.ok(rules.has(word), `${f.kind}: quotes \`${quoted}\`, neither the program's name nor a rule of the language: ${f.text}`);
        }
      }
      // features luna-ts does not have must not be recommended in words either, and trace
      // playback only with the options that do it
      assert.doesNotMatch(f.text, /\b(balancer|cach(e|ing)|checkpoint|prefetch|pinning|affinity|GPU)\b/i, `${f.kind}: ${f.text}`);
      if (/\b(playback|replay)/i.test(f.text)) assert.match(f.text, /--replay/, `${f.kind}: playback without its option: ${f.text}`);
      for (const e of f.evidence) assert.ok(e.split('.')[0]! in r, `${f.kind}: evidence ${e} is not a field of the report`);
    }
  }
  assert.ok(texts > 100, `${texts} texts`);
  assert.deepEqual(FINDING_KINDS.filter((k) => !seen.has(k)), [], 'every kind of finding was produced and checked');
});

test('the advice source names options and rules only through the feature tables', () => {
  for (const file of ['src/analysis/slow/interpret.ts', 'src/analysis/slow/format.ts']) {
    const code = readFileSync(file, 'utf8').split('\n').filter((l) => !/^\s*(\/\/|\*|\/\*\*)/.test(l)).join('\n')
      .replace(/\b(RULE|OPTION)\.\w+/g, ''); // references to the tables are how it should be done
    assert.doesNotMatch(code, /--[a-z]/, `${file} spells an option itself`);
    for (const r of Object.values(RULE)) assert.doesNotMatch(code, new RegExp(`\\b${r}\\b`), `${file} spells the rule ${r} itself`);
  }
});
