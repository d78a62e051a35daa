// The OTF2 export read back by OTF2's own tools: otf2-print (otf2-tools) and the OTF2 Python
// bindings (python3-otf2), against the CF and transfer counts of the trace's own records.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTrace } from '../../src/trace/merge.js';
import { builtFile } from '../../src/core/addon.js';
import { exportOtf2 } from '../../src/trace/export/otf2.js';
import { ThreadTraceWriter } from '../../src/trace/writer.js';
import { openTraceDir, writeManifest } from '../../src/trace/dir.js';
import { traceFileName } from '../../src/trace/format.js';
import { manifest, tempDir } from './helpers.js';

function luna(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/luna', ...args], { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

const has = (cmd: string, args: string[]): boolean => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
const PYTHON = ['/usr/bin/python3', 'python3'].find((p) => has(p, ['-c', 'import otf2']));
const missing = [
  builtFile('luna-otf2') ? null : 'the luna-otf2 helper (install libotf2-trace-dev, then npm run install)',
  has('otf2-print', ['--version']) ? null : 'otf2-print (Debian package otf2-tools)',
  PYTHON ? null : 'the OTF2 Python bindings (Debian package python3-otf2)',
].filter(Boolean);
/** In CI (.ci/run installs the tools) a missing tool fails; elsewhere the tests say what to install. */
function need(t: { skip(msg: string): void }): boolean {
  if (missing.length === 0) return true;
  assert.ok(!process.env.CI, `missing in CI: ${missing.join(', ')}`);
  t.skip(`missing: ${missing.join(', ')}`);
  return false;
}

/** Per location: Enter/Leave per region, MPI sends/receives, metrics; `order` problems found. */
interface PyRead {
  clock: { resolution: number; offset: number; length: number };
  locations: Record<string, { group: string; events: number; enter: Record<string, number>; leave: number; send: number; recv: number; metric: number; unordered: number; unnested: number }>;
  regions: string[];
  attrs: Record<string, number>;
  gids: string[];
  instances: string[];
}

const PY_READ = `
import json, sys, collections, otf2
out = {'locations': {}, 'attrs': collections.Counter(), 'gids': [], 'instances': []}
with otf2.reader.open(sys.argv[1]) as tr:
    d = tr.definitions
    cp = d.clock_properties
    out['clock'] = {'resolution': cp.timer_resolution, 'offset': cp.global_offset, 'length': cp.trace_length}
    out['regions'] = sorted(r.name for r in d.regions)
    state = {}
    for loc in d.locations:
        out['locations'][loc.name] = {'group': loc.group.name, 'events': loc.number_of_events, 'enter': collections.Counter(), 'leave': 0, 'send': 0, 'recv': 0, 'metric': 0, 'unordered': 0, 'unnested': 0}
        state[loc.name] = {'t': 0, 'stack': []}
    for loc, ev in tr.events:
        L = out['locations'][loc.name]; s = state[loc.name]
        if ev.time < s['t']: L['unordered'] += 1
        s['t'] = ev.time
        for a, v in (ev.attributes or {}).items():
            out['attrs'][a.name] += 1
            if a.name == 'gid': out['gids'].append(v)
            if a.name == 'instance': out['instances'].append(v)
        if isinstance(ev, otf2.events.Enter):
            L['enter'][ev.region.name] += 1; s['stack'].append(ev.region.name)
        elif isinstance(ev, otf2.events.Leave):
            L['leave'] += 1
            if not s['stack'] or s['stack'].pop() != ev.region.name: L['unnested'] += 1
        elif isinstance(ev, otf2.events.MpiSend): L['send'] += 1
        elif isinstance(ev, otf2.events.MpiRecv): L['recv'] += 1
        elif isinstance(ev, otf2.events.Metric): L['metric'] += 1
    for name, s in state.items():
        out['locations'][name]['unnested'] += len(s['stack'])
json.dump(out, sys.stdout)
`;

function pyRead(anchor: string): PyRead {
  const r = spawnSync(PYTHON!, ['-c', PY_READ, anchor], { encoding: 'utf8', maxBuffer: 256 << 20, timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as PyRead;
}

/** otf2-print's event lines counted per location id and event name (ENTER, LEAVE, MPI_SEND …). */
function printCounts(anchor: string): Map<string, number> {
  const r = spawnSync('otf2-print', [anchor], { encoding: 'utf8', maxBuffer: 256 << 20, timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const counts = new Map<string, number>();
  for (const line of r.stdout.split('\n')) {
    const m = /^([A-Z_]+)\s+(\d+)\s+\d+\s/.exec(line);
    if (m) counts.set(`${m[2]}:${m[1]}`, (counts.get(`${m[2]}:${m[1]}`) ?? 0) + 1);
  }
  return counts;
}

/** From the trace's own records: CFs finished per `node / lane k`, code names, DF arrivals per node. */
function traceCounts(dir: string): { cfs: Map<string, number>; codes: Set<string>; arrivals: number[]; gids: Set<string> } {
  const tr = readTrace(dir);
  const cfs = new Map<string, number>();
  const arrivals = new Array<number>(tr.manifest.nodes).fill(0);
  const gids = new Set<string>();
  for (const e of tr.events) {
    if (e.kind === 'cfFinish') cfs.set(`node ${e.node} / lane ${e.lane}`, (cfs.get(`node ${e.node} / lane ${e.lane}`) ?? 0) + 1);
    else if (e.kind === 'dfReceive') arrivals[e.node]!++;
    else if (e.kind === 'cfCreated' || e.kind === 'cfReceive') gids.add(e.gid);
  }
  return { cfs, codes: new Set(tr.manifest.codes), arrivals, gids };
}

let shared: { dir: string; trace: string } | null = null;
before(() => {
  if (missing.length) return;
  const dir = mkdtempSync(join(tmpdir(), 'luna-otf2-'));
  const trace = join(dir, 'run.trace');
  const r = luna(['run', '--nodes', '2', '--threads', '2', '--trace', trace, 'examples/matmul/matmul_cyclic.fa', '64', '4']);
  assert.equal(r.status, 0, r.stderr);
  shared = { dir, trace };
});
after(() => { if (shared) rmSync(shared.dir, { recursive: true, force: true }); });

test('luna export otf2: a real 2-node run read back by otf2-print and the Python bindings, an Enter/Leave per CF on its lane', (t) => {
  if (!need(t)) return;
  const { dir, trace } = shared!;
  const out = join(dir, 'archive');
  const r = luna(['export', 'otf2', trace, '-o', out]);
  assert.equal(r.status, 0, r.stderr);
  const anchor = join(out, 'traces.otf2');
  assert.ok(existsSync(anchor) && existsSync(join(out, 'traces.def')) && existsSync(join(out, 'traces')));
  assert.match(r.stderr, /wrote OTF2 archive .*traces\.otf2 \(6 locations, \d+ events: \d+ CF executions, \d+ DF messages\)/);
  const want = traceCounts(trace);
  const cfTotal = [...want.cfs.values()].reduce((a, b) => a + b, 0);
  assert.ok(cfTotal > 100 && want.cfs.size === 4, 'the run used every lane of both nodes');

  const py = pyRead(anchor);
  assert.equal(py.clock.resolution, 1e9, '1 tick = 1 ns');
  assert.ok(py.clock.length > 0);
  assert.deepEqual(Object.keys(py.locations).sort(), ['node 0 / lane 1', 'node 0 / lane 2', 'node 0 / system', 'node 1 / lane 1', 'node 1 / lane 2', 'node 1 / system']);
  for (const [name, L] of Object.entries(py.locations)) {
    assert.equal(L.group, name.split(' / ')[0], 'a location group per node');
    assert.equal(L.unordered, 0, `${name}: events in time order`);
    assert.equal(L.unnested, 0, `${name}: every Leave closes the last Enter`);
    const enters = Object.values(L.enter).reduce((a, b) => a + b, 0);
    assert.equal(L.leave, enters);
    assert.equal(L.events, 2 * enters + L.send + L.recv + L.metric, `${name}: the definition counts the events read`);
    if (name.endsWith('system')) continue;
    // a worker lane: one Enter per CF that finished there, in a region named by its code
    assert.equal(enters, want.cfs.get(name), `${name}: CF executions`);
    for (const region of Object.keys(L.enter)) assert.ok(want.codes.has(region), `region ${region} is a code of the program`);
  }
  assert.ok(py.regions.includes('mul') && py.regions.includes('system busy'), py.regions.join());
  for (let n = 0; n < 2; n++) {
    assert.equal(py.locations[`node ${n} / system`]!.recv, want.arrivals[n], `node ${n}: an MpiRecv per DF arrival`);
    assert.ok(py.locations[`node ${n} / system`]!.metric > 0, 'counters as metrics');
    const sys = py.locations[`node ${n} / system`]!;
    assert.equal(sys.enter['DF send'] ?? 0, sys.send, 'each MpiSend inside a DF send region');
    assert.equal(sys.enter['DF receive'] ?? 0, sys.recv, 'each MpiRecv inside a DF receive region');
  }
  assert.equal(py.locations['node 0 / system']!.send, want.arrivals[1], 'what node 1 received, node 0 sent');
  // the CF identity on every Enter: node-local number, global id and instance name
  assert.equal(py.attrs.cf, cfTotal);
  assert.equal(py.gids.length, cfTotal);
  for (const g of py.gids) assert.ok(want.gids.has(g), `gid ${g} is one the trace created`);
  assert.ok(py.instances.includes('prod[1][2][3]'), py.instances.slice(0, 5).join());

  // otf2-print agrees event by event
  const pr = printCounts(anchor);
  const locId = (name: string): number => { const [, n, l] = /node (\d+) \/ (?:lane (\d+)|system)/.exec(name)!; return Number(n) * 65536 + Number(l ?? 0); };
  for (const [name, L] of Object.entries(py.locations)) {
    const id = locId(name);
    const enters = Object.values(L.enter).reduce((a, b) => a + b, 0);
    assert.equal(pr.get(`${id}:ENTER`) ?? 0, enters, `otf2-print ENTER on ${name}`);
    assert.equal(pr.get(`${id}:LEAVE`) ?? 0, enters, `otf2-print LEAVE on ${name}`);
    assert.equal(pr.get(`${id}:MPI_SEND`) ?? 0, L.send);
    assert.equal(pr.get(`${id}:MPI_RECV`) ?? 0, L.recv);
    if (!name.endsWith('system')) assert.equal(pr.get(`${id}:ENTER`), want.cfs.get(name));
  }

  // a second export replaces the archive
  const again = luna(['export', 'otf2', trace, '-o', out]);
  assert.equal(again.status, 0, again.stderr);
  assert.equal(pyRead(anchor).attrs.cf, cfTotal);
});

/** The archive's files by path (the anchor less its random trace id: two exports of one trace differ there only). */
function archiveFiles(dir: string, sub = ''): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const f of readdirSync(join(dir, sub))) {
    const p = join(sub, f);
    if (statSync(join(dir, p)).isDirectory()) for (const [k, v] of archiveFiles(dir, p)) files.set(k, v);
    else if (p !== 'traces.otf2') files.set(p, readFileSync(join(dir, p)));
  }
  return files;
}

test('OTF2: items spilled to sorted runs and merged back give the same archive as items held in memory', (t) => {
  if (!need(t)) return;
  const { dir, trace } = shared!;
  const held = exportOtf2(trace, join(dir, 'held'));
  // a run of 2 items per location: every location merges hundreds of runs, spans nesting across them
  const spilled = exportOtf2(trace, join(dir, 'spilled'), undefined, { spillBlock: 2 });
  assert.deepEqual(spilled.events, held.events);
  assert.ok(Object.values(held.events).every((n) => n > 4), 'every location has more than two runs');
  const a = archiveFiles(join(dir, 'held')), b = archiveFiles(join(dir, 'spilled'));
  assert.deepEqual([...b.keys()].sort(), [...a.keys()].sort());
  for (const [k, v] of a) assert.ok(v.equals(b.get(k)!), `${k} is the same byte for byte`);
  assert.ok(!existsSync(join(dir, 'spilled', '.luna-otf2.items')), 'the spill file is removed');
  const py = pyRead(spilled.anchor);
  for (const [name, L] of Object.entries(py.locations)) assert.ok(L.unordered === 0 && L.unnested === 0, `${name}: in order and nested`);
});

test('OTF2: a wait inside a CF nests in it, one that outlasts its CF is cut at its end, instants in order', (t) => {
  if (!need(t)) return;
  const dir = tempDir(t);
  const sites = [{ label: 'f', code: 1, kind: 'call' as const, file: 'a.fa', line: 1, col: 1, spawnNo: 0 }];
  openTraceDir(dir, manifest(1, 2, { sites }));
  const w0 = ThreadTraceWriter.open(dir, 0, 0), w1 = ThreadTraceWriter.open(dir, 0, 1);
  w0.programStart(0); w0.cfCreated(1, 5, -1, 0, 'g5', null); w0.cfCreated(1, 6, -1, 0, 'g6', [2]);
  // CF 5 on [2, 9) waits on [3, 7) and, from 8, for what it never gets before it ends (to 12)
  w1.cfStart(2, 0, 5, 1); w1.wait(3, 7, 1, 5, -1, 1, 'blocks[2]'); w1.wait(8, 12, 1, 5, -1, 2, 'L'); w1.cfFinish(9, 6, 5, 1);
  // CF 6 starts at the tick CF 5 ends
  w1.cfStart(9, 6, 6, 1); w1.cfFinish(15, 10, 6, 1);
  w0.programFinish(20, 1);
  w0.close(); w1.close();
  writeManifest(dir, manifest(1, 2, { sites, files: [{ node: 0, thread: 0, path: traceFileName(0, 0) }, { node: 0, thread: 1, path: traceFileName(0, 1) }] }));
  const out = join(dir, 'otf2');
  const r = luna(['export', 'otf2', dir, '-o', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /1 span\(s\) crossed the end of the span they started in and were cut there/);
  const py = pyRead(join(out, 'traces.otf2'));
  const lane = py.locations['node 0 / lane 1']!;
  assert.deepEqual({ ...lane.enter }, { init: 2, 'wait descriptor': 1, 'wait lock': 1 });
  assert.equal(lane.unordered, 0);
  assert.equal(lane.unnested, 0);
  assert.deepEqual(py.instances.sort(), ['f', 'f[2]']);

  // the library call: progress through both phases to the end, the same counts
  const calls: [number, number, string][] = [];
  const res = exportOtf2(dir, join(dir, 'otf2-lib'), (d, e, p) => calls.push([d, e, p]));
  assert.deepEqual([...new Set(calls.map((c) => c[2]))], ['reading', 'writing']);
  const last = calls.at(-1)!;
  assert.equal(last[0], last[1], 'progress ends at its total');
  assert.equal(res.cfs, 2);
  assert.deepEqual(res.events, { 'node 0 / lane 1': 8, 'node 0 / system': 0 });
  assert.equal(pyRead(res.anchor).locations['node 0 / lane 1']!.events, 8);
  // every item a run of its own: the cut wait is cut the same when it comes back from disk
  const one = exportOtf2(dir, join(dir, 'otf2-runs'), undefined, { spillBlock: 1 });
  assert.deepEqual(one.events, res.events);
  assert.deepEqual(one.warnings, res.warnings);
  const a = archiveFiles(join(dir, 'otf2-lib')), b = archiveFiles(join(dir, 'otf2-runs'));
  for (const [k, v] of a) assert.ok(v.equals(b.get(k)!), `${k} is the same byte for byte`);
});

test('luna export otf2: a bad trace, a file as output and - are clear errors, never a stack', (t) => {
  if (!need(t)) return;
  const dir = tempDir(t);
  const missingTrace = luna(['export', 'otf2', join(dir, 'nope'), '-o', join(dir, 'o')]);
  assert.equal(missingTrace.status, 1);
  assert.match(missingTrace.stderr, /^luna: error: no trace directory .*nope/);
  // a directory whose manifest is not one
  const bad = join(dir, 'bad.trace');
  openTraceDir(bad, manifest(1, 1));
  writeFileSync(join(bad, 'manifest.json'), '{"format": "luna-ts-trace", "version"');
  const b = luna(['export', 'otf2', bad, '-o', join(dir, 'o')]);
  assert.notEqual(b.status, 0);
  assert.match(b.stderr, /^luna: error: .*manifest/m);
  assert.doesNotMatch(b.stderr, /\n\s+at /, 'no stack trace');
  const dash = luna(['export', 'otf2', bad, '-o', '-']);
  assert.equal(dash.status, 2);
  assert.match(dash.stderr, /-o takes a directory/);
  writeFileSync(join(dir, 'file'), 'x');
  const good = join(dir, 'good.trace');
  openTraceDir(good, manifest(1, 1));
  const w0 = ThreadTraceWriter.open(good, 0, 0);
  w0.programStart(0); w0.programFinish(1, 1); w0.close();
  writeManifest(good, manifest(1, 1, { files: [{ node: 0, thread: 0, path: traceFileName(0, 0) }] }));
  const f = luna(['export', 'otf2', good, '-o', join(dir, 'file')]);
  assert.equal(f.status, 1);
  assert.match(f.stderr, /^luna: error: .*file is a file; luna export otf2 writes an archive directory there/);
  // a truncated thread file: the damage said, exit 3, the archive of what was read still written
  const file = join(good, traceFileName(0, 0));
  truncateSync(file, statSync(file).size - 3);
  const d = luna(['export', 'otf2', good, '-o', join(dir, 'damaged')]);
  assert.equal(d.status, 3, d.stderr);
  assert.match(d.stderr, /trace damage in .*truncated/s);
  assert.equal(Object.keys(pyRead(join(dir, 'damaged', 'traces.otf2')).locations).length, 1);
});
