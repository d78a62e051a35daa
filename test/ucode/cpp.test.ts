// C++ ucodes and the ucode context (ABI version 2): a C++ ucode reads its CF's context and asks
// its node through the request port, its waits traced inside its CF and booked as W by SLOW, on
// one node and two; an import that may not wait is refused with the reason; a library built for
// ABI version 1 (a frozen copy of that boundary, written here in C) still loads and runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { analyzeSlowTrace } from '../../src/analysis/slow/index.js';
import { WAIT_KINDS } from '../../src/trace/schema.js';
import { findCompiler } from '../../src/ucode/cpp/compiler.js';
import { fixture, runWithResource, tracedWaits } from './fixtures.js';
import { runInProcess } from '../runtime/harness.js';
import { noCompiler } from '../cpp/fixtures.js';

const skip = noCompiler();

const PROGRAM = `
import c_nap(int \`ms, name \`done) as nap : WAITS;
import c_who(int \`k, name \`w) as who : WAITS;
import c_check(value \`w, int \`k) as check;

sub main(int n)
{
    df done, w;
    for i = 0..n-1 {
        cf nap[i]: nap(20, done[i]) @ { locator_cyclic: i; };
    }
    cf who[7]: who(7, w) @ { locator_cyclic: n-1; };
    check(w, 7);
}
`;

const UCODES = `#include "ucenv.h"
#include <string>
using namespace luna::ucenv;
extern "C" {
// waits for the test resource's timer: the answer is the JSON of the milliseconds
void c_nap(int ms, OutputDF &done) { done = std::stoi(ucenv::request("test.sleep", "{\\"ms\\": " + std::to_string(ms) + "}")); }
void c_who(int k, OutputDF &w) {
  ucenv::Context c = ucenv::context();
  w = c.label + " " + c.gid + " " + std::to_string(c.node) + " " + std::to_string(c.lane) + " " + (c.waits ? "waits" : "-") + " " + std::to_string(c.cf) + " " + ucenv::request("test.who");
}
void c_check(const InputDF &w, int k) {
  std::string s = w.get_string();
  if (s.rfind("who[" + std::to_string(k) + "] ", 0) != 0) ABORT("wrong identity: " << s);
}
}
`;

for (const nodes of [1, 2]) {
  test(`a C++ ucode waits on the test resource through the request port, ${nodes} node(s) × 2 threads: its context, wait records inside its CF, W in SLOW`, { skip }, async (t) => {
    const dir = fixture(t, { 'prog.fa': PROGRAM, 'ucodes.cpp': UCODES });
    const n = 4;
    const ran = await runWithResource(dir, { nodes, threads: 2, args: [String(n)], traced: true });
    for (const r of ran.results) assert.equal(r.ok, true, r.message);
    assert.deepEqual(ran.logs.map((l) => l.count.get('test.sleep') ?? 0), Array.from({ length: nodes }, (_, k) => Math.ceil((n - k) / nodes)));

    const ws = tracedWaits(ran.trace!);
    const naps = ws.filter((w) => w.resource === 'sleep 20 ms');
    assert.equal(naps.length, n, 'one wait per nap');
    assert.ok(naps.every((w) => WAIT_KINDS[w.waitKind] === 'test' && w.end - w.t >= 19e6), naps.map((w) => (w.end - w.t) / 1e6).join(', '));
    if (nodes > 1) assert.deepEqual([...new Set(naps.map((w) => w.node))].sort(), [0, 1], 'naps waited on both nodes');
    // who[7] read its context: the CF number its cfStart records, on a worker, with its import's capability
    const who = ws.find((w) => w.resource === 'the identity of its CF' || WAIT_KINDS[w.waitKind] === 'request');
    assert.ok(who, 'who[7] asked its node');

    const slow = analyzeSlowTrace(ran.trace!);
    const W = slow.perThread.reduce((s, x) => s + x.W, 0);
    const booked = ws.reduce((s, w) => s + (w.end - w.t), 0);
    assert.ok(W > 0.99 * booked && W <= booked + 1, `SLOW books the waits as W: ${W} of ${booked} ns`);
    // naps of one thread may overlap nothing else there: W is at least the naps' time per thread
    assert.ok(W >= naps.reduce((s, w) => s + (w.end - w.t), 0) * 0.99);
    // and the command says the same
    const cli = spawnSync(process.execPath, ['bin/luna', 'analyze', 'slow', '--json', ran.trace!], { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });
    assert.equal(cli.status, 0, cli.stderr);
    const json = JSON.parse(cli.stdout) as { perThread: { W: number }[] };
    assert.equal(json.perThread.reduce((s, x) => s + x.W, 0), W, 'luna analyze slow books the same W');
  });
}

test('a C++ ucode whose import does not say it may wait cannot ask its node: the run fails saying so', { skip }, async (t) => {
  const dir = fixture(t, {
    'prog.fa': 'import c_ask(int `k) as ask;\nsub main() { cf a: ask(1); }\n',
    'ucodes.cpp': '#include "ucenv.h"\nextern "C" void c_ask(int k) { ucenv::request("test.echo", "1"); }\n',
  });
  const ran = await runWithResource(dir, { nodes: 1, threads: 1 });
  const r = ran.results[0]!;
  assert.equal(r.ok, false);
  assert.match(r.message!, /RequestFailed|asked its node for 'test\.echo', but its import does not say it may wait: add ': WAITS'/);
  assert.match(r.message!, /CF a \(ucode c_ask/);
});

// The boundary as luna-ts 0.1 built it (ABI version 1): the host has five fields.
const V1_LIBRARY = `
#include <stdint.h>
typedef struct { int32_t type; int32_t i; double d; const char *p; uint64_t n; int32_t ref; int32_t pad; } slot;
typedef struct {
  void *ctx;
  void *(*alloc)(void *, uint64_t, int32_t *);
  const char *(*name)(void *, int32_t);
  void (*commit)(void *, int32_t, const slot *);
  void (*fail)(void *, const char *);
} host1;
typedef struct { const host1 *host; slot *args; int32_t nargs; } frame1;
const int luna_ucode_abi = 1;
const char luna_kinds_twice[] = "in";
int luna_call_twice(frame1 *f) {
  slot out = {1, 2 * f->args[0].i, 0, 0, 0, -1, 0};
  if (f->args[0].i < 0) { f->host->fail(f->host->ctx, "negative"); return 1; }
  f->host->commit(f->host->ctx, 1, &out);
  return 0;
}
`;

test('a C++ ucode library built for ABI version 1 still loads and runs', { skip }, async (t) => {
  const dir = fixture(t, { 'v1.c': V1_LIBRARY });
  const lib = join(dir, 'libv1.so');
  const cc = findCompiler();
  execFileSync(cc.argv[0]!, [...cc.argv.slice(1), '-x', 'c', '-shared', '-fPIC', '-o', lib, join(dir, 'v1.c')]);
  const seen: number[] = [];
  const ucodes = { c_twice: 1, c_show: (v: { getInt(): number }) => { seen.push(v.getInt()); } };
  const head = 'import c_twice(int `k, name `r) as twice;\nimport c_show(value `r) as show;\n';
  const ok = await runInProcess(`${head}sub main() { df r; twice(21, r); show(r); }\n`, ucodes, { native: { lib, aliases: ['twice'] } });
  assert.equal(ok.ok, true, ok.message);
  assert.deepEqual(seen, [42], 'the version-1 entry point doubled its input');
  const bad = await runInProcess(`${head}sub main() { df r; cf t: twice(-1, r); }\n`, ucodes, { native: { lib, aliases: ['twice'] } });
  assert.equal(bad.ok, false, 'its failure is reported too');
  assert.match(bad.message!, /negative/);
  assert.match(bad.message!, /CF t \(ucode c_twice/);
});
