// Nothing a C++ ucode does goes unreported: the C++ fault matrix — a loop stopped by
// --cf-timeout, a segmentation fault, abort(), exit(), an exception, a write past the end of a
// DF buffer — on one node with one thread (the fault on the system thread), with two threads
// (on a worker), on 3 nodes and under mpirun, with real compilation and processes. Every run
// exits 1 and names the cause, the fragment, the ucode and the node; none says "OK"; no process
// is left. By default the cells that prove each mechanism run; LUNA_FAULT_MATRIX=full runs all
// 24 (about 2 minutes):
//
//   LUNA_FAULT_MATRIX=full node --import ./dist/test/setup.js --test dist/test/reliability/cpp-faults.test.js
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fixture, noCompiler } from '../cpp/fixtures.js';
import { LUNA } from '../cli/helpers.js';
import { cleanEnv, groupGone, mpirunPath, processesWith, start } from './procs.js';

// (`tag`, unused, marks a run's processes.) w[i] copies its input plus one into a new buffer after spinning `us` microseconds (so that
// the policy sends it to a worker); w[bad] then does what `mode` says, after saying on which
// thread. The checks add up the mismatches, and `done` prints OK only when there is none.
const PROGRAM = `import c_init(int \`v, name \`x) as init;
import c_work(int \`mode, int \`i, int \`us, value \`a, name \`x) as work;
import c_check(int \`i, value \`s, value \`x, name \`t) as check;
import c_done(value \`s) as done;
sub main(int n, int mode, int bad, int us, string tag)
{
    df a, b, s;
    for i = 0..n-1 init(i, a[i]);
    for i = 0..n-1 cf w[i]: work(i == bad ? mode : 0, i, us, a[i], b[i]) @ { locator_cyclic: i; };
    init(0, s[0]);
    for i = 0..n-1 check(i, s[i], b[i], s[i+1]);
    done(s[n]);
}
`;
const UCODES = `#include "ucenv.h"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>
using namespace luna::ucenv;
extern "C" {
void c_init(int v, OutputDF &x) { int *p = x.create<int>(16); for (int k = 0; k < 16; k++) p[k] = v; }
void c_work(int mode, int i, int us, const InputDF &a, OutputDF &x) {
  auto t = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t < std::chrono::microseconds(us)) {}
  const int *in = a.getData<int>();
  int *out = x.create<int>(16);
  for (int k = 0; k < 16; k++) out[k] = in[k] + 1;
  if (mode == 0) return;
  fprintf(stderr, "fault %d on the %s thread\\n", mode, syscall(SYS_gettid) == getpid() ? "system" : "worker");
  if (mode == 1) { volatile int spin = 1; while (spin) {} }
  if (mode == 2) { volatile int *p = nullptr; *p = i; }
  if (mode == 3) abort();
  if (mode == 4) exit(3);
  if (mode == 5) throw std::runtime_error("bad " + std::to_string(i));
  if (mode == 6) for (int k = 16; k < 20; k++) out[k] = 0;
  if (mode == 7) for (int k = 16; k < 8192; k++) out[k] = 0x41414141;
  if (mode == 8) {
    // a buffer of 64 KiB has a 4 KiB guard, checked a page at a time: one byte deep inside it
    int *big = x.create<int>(16384);
    for (int k = 0; k < 16; k++) big[k] = in[k] + 1;
    reinterpret_cast<char *>(big)[65536 + 3001] = 0;
  }
}
void c_check(int i, const InputDF &s, const InputDF &x, OutputDF &t) {
  const int *p = x.getData<int>();
  int bad = 0;
  for (int k = 0; k < 16; k++) if (p[k] != i + 1) bad = 1;
  t.create<int>(16)[0] = s.getData<int>()[0] + bad;
}
void c_done(const InputDF &s) { printf(s.getData<int>()[0] ? "cfaults: WRONG\\n" : "cfaults: OK\\n"); }
}
`;

const MODES = {
  loop: { mode: 1, cause: /worker thread \d+ of node \d+ was stopped after 1\.00 s \(--cf-timeout\) while running ucode c_work/ },
  segfault: { mode: 2, cause: /segmentation fault \(SIGSEGV\) in C\+\+ ucode c_work \(the run stops; the process's memory may be corrupted\)/ },
  abort: { mode: 3, cause: /abort\(\) \(SIGABRT, e\.g\. a failed assert\) in C\+\+ ucode c_work/ },
  exit: { mode: 4, cause: /C\+\+ ucode c_work called exit\(3\): a ucode must not end the process/ },
  throw: { mode: 5, cause: /exception in ucode c_work: C\+\+ exception std::runtime_error: bad \d+/ },
  overrun: { mode: 6, cause: /C\+\+ ucode c_work wrote past the end of output DF b\[\d+\] \(64 bytes\): byte 64 was overwritten/ },
  overrunLarge: { mode: 8, cause: /C\+\+ ucode c_work wrote past the end of output DF b\[\d+\] \(65536 bytes\): byte 68537 was overwritten/ },
} as const;
type Mode = keyof typeof MODES;

/**
 * Where the fault happens: `bad` is the faulting fragment (w[bad] runs on node bad % nodes),
 * `us` the work of every fragment. The system thread runs a code's first calls, and codes
 * measured under 20 µs, itself; with --cf-timeout (given on workers' cells, 1 s for the loop,
 * else 60 s) nothing runs there.
 */
const PLACES = {
  '1 thread': { nodes: 1, threads: 1, bad: 0, us: 0, thread: 'system', mpirun: false },
  '2 threads': { nodes: 1, threads: 2, bad: 6, us: 1000, thread: 'worker', mpirun: false },
  '3 nodes': { nodes: 3, threads: 1, bad: 5, us: 1000, thread: 'worker', mpirun: false },
  mpirun: { nodes: 3, threads: 1, bad: 5, us: 1000, thread: 'worker', mpirun: true },
} as const;
type Place = keyof typeof PLACES;

/** The cells that prove each mechanism (the rest: LUNA_FAULT_MATRIX=full). */
const CHOSEN: [Mode, Place][] = [
  ['segfault', '1 thread'], // the jump back on the system thread
  ['loop', '2 threads'], ['abort', '2 threads'], ['exit', '2 threads'], ['throw', '2 threads'], ['overrun', '2 threads'], ['overrunLarge', '2 threads'],
  ['loop', '3 nodes'], ['segfault', '3 nodes'], ['overrun', '3 nodes'],
  ['loop', 'mpirun'], ['exit', 'mpirun'],
];
const FULL = process.env.LUNA_FAULT_MATRIX === 'full';
const mpirun = mpirunPath();
const skip = noCompiler();

describe('C++ fault matrix', { skip }, () => {
  let dir = '';
  before(() => { dir = fixture('luna-cpp-faults-', { 'cfaults.fa': PROGRAM, 'ucodes.cpp': UCODES }); });
  after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

  /** Run the fixture; `marker` (a unique argument) finds its processes afterwards. */
  async function runCell(mode: number, place: (typeof PLACES)[Place], n: number, marker: string, cfTimeout?: string) {
    const args = ['run', '--threads', String(place.threads), ...(cfTimeout ? ['--cf-timeout', cfTimeout] : []), 'cfaults.fa', String(n), String(mode), String(place.bad), String(place.us), marker];
    const rv = join(dir, `rv-${marker}`);
    mkdirSync(rv);
    const env = cleanEnv({ LUNA_RENDEZVOUS_DIR: rv });
    const p = place.mpirun
      ? start(mpirun!, ['--allow-run-as-root', '--oversubscribe', '-np', String(place.nodes), '-x', 'LUNA_RENDEZVOUS_DIR', '-x', 'LUNA_CACHE_DIR', process.execPath, LUNA, ...args], dir, env)
      : start(process.execPath, [LUNA, ...args.slice(0, 1), '--nodes', String(place.nodes), ...args.slice(1)], dir, env);
    const ended = await p.exited;
    const gone = await groupGone(p.pid);
    return { ...ended, out: p.out(), err: p.err(), gone, left: processesWith(marker), rendezvous: readdirSync(rv) };
  }

  test('the fixture computes right without a fault (the checks can fail)', async () => {
    const r = await runCell(0, PLACES['2 threads'], 12, `cf-ok-${process.pid}`, '60s');
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'cfaults: OK\n');
  });

  const cells = FULL ? (Object.keys(MODES) as Mode[]).flatMap((m) => (Object.keys(PLACES) as Place[]).map((p) => [m, p] as [Mode, Place])) : CHOSEN;
  for (const [name, where] of cells) {
    const place = PLACES[where];
    test(`${name} on ${where}: exit 1, the cause, fragment, ucode and node named, never OK, no process left`, { skip: place.mpirun && !mpirun ? 'mpirun not found' : false }, async () => {
      const m = MODES[name];
      // a loop is stopped by --cf-timeout, which runs every fragment on a worker (the system
      // thread could not be stopped in the middle of a ucode)
      const thread = name === 'loop' ? 'worker' : place.thread;
      const r = await runCell(m.mode, place, 12, `cf-${name}-${where.replace(' ', '')}-${process.pid}`, name === 'loop' ? '1s' : thread === 'system' ? undefined : '60s');
      const ctx = `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\n--- stdout\n${r.out}--- stderr\n${r.err}`;
      assert.equal(r.code, 1, ctx);
      assert.doesNotMatch(r.out, /cfaults: OK/, ctx);
      assert.match(r.err, new RegExp(`^fault ${m.mode} on the ${thread} thread$`, 'm'), ctx);
      assert.match(r.err, m.cause, ctx);
      const node = place.bad % place.nodes;
      assert.match(r.err, new RegExp(`\\n {2}in CF w\\[${place.bad}\\] \\(ucode c_work, id [\\d_]+\\) at cfaults\\.fa:9:20 on node ${node}\\n`), ctx);
      assert.doesNotMatch(r.err, /internal error|^\s+at /m, ctx);
      assert.ok(r.gone, 'the launcher and its nodes exited');
      assert.deepEqual(r.left, [], `no luna process left\n${ctx}`);
      assert.deepEqual(r.rendezvous, [], 'no rendezvous file left');
    });
  }

  test('an overrun far past the guard still never ends as OK, and names the ucode', async () => {
    const r = await runCell(7, PLACES['1 thread'], 12, 'cf-overrun-far');
    const ctx = `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\n--- stdout\n${r.out}--- stderr\n${r.err}`;
    assert.doesNotMatch(r.out, /cfaults: OK/, ctx);
    assert.ok(r.gone);
    // memory the ucode overwrote may crash another thread before the ucode returns: the process
    // then dies of that signal with no message (a documented limit), never with a success
    if (r.signal !== null) { assert.equal(r.signal, 'SIGSEGV', ctx); return; }
    assert.equal(r.code, 1, ctx);
    // reported at the ucode's return, or, when the corrupted heap crashes the process first (in a
    // call the ucode makes to the runtime, or after it, or after the overrun itself faulted in the
    // ucode), by the crash handler from its static text
    assert.match(r.err, /C\+\+ ucode c_work wrote past the end of output DF b\[0\]|(after C\+\+ ucode c_work (wrote past the end of a DF buffer|crashed with [^\n]+)|in a call C\+\+ ucode c_work made to the runtime) \(memory it corrupted\?\): the process stops/, ctx);
  });
});
