// The block of a dynamic array in C++ ucodes (ucenv.h `DdaBlock &`, docs/dda.md): the seed's
// operations on the runtime's shared memory, growth past the block's memory, both
// defragmentations at the end of the call (byte for byte what the TypeScript block does), a
// rearrangement of what C++ filled, and misuse stopping the run naming the fragment.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dynamicArrays } from '../../src/runtime/dda/index.js';
import { DdaBlock, type DefragOrder } from '../../src/ucode/dda.js';
import { fixture, runWithResource } from '../ucode/fixtures.js';
import { noCompiler } from '../cpp/fixtures.js';

const skip = noCompiler();

/**
 * One directory for the tests of a loop whose ucodes and imports are the same (only main's body
 * differs): the build cache's key holds the sources' paths and the imports, so their C++ builds
 * once, not once a test (a build ~1.5 s of CPU); each test writes its prog.fa there.
 */
function sharedFixture(files: Record<string, string>): (prog: string) => string {
  let dir: string | undefined;
  after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });
  return (prog) => {
    dir ??= fixture({ after: () => {} }, files);
    writeFileSync(join(dir, 'prog.fa'), prog);
    return dir;
  };
}

const CPP = `#include "ucenv.h"
#include <string>
using namespace luna::ucenv;
struct El { double id, sum; };
extern "C" {
// n elements by addElement(n), then one by one (growing when full); ids divisible by 3 marked
void c_push(DdaBlock &P, int n, OutputDF &done) {
  if (P.addElement(static_cast<size_t>(1)) != nullptr) ABORT("an empty block took an element");
  if (!P.resize(static_cast<size_t>(n / 2) * P.getElsize())) ABORT("resize refused");
  El *e = P.addElements<El>(static_cast<size_t>(n / 2));
  for (int i = 0; i < n / 2; i++) e[i] = El{double(i), 3.0 * i + 1};
  for (int i = n / 2; i < n; i++) {
    El el{double(i), 3.0 * i + 1};
    if (P.addElement(el) == nullptr) { P.resize(2 * P.getMaxSize()); P.addElement(el); }
  }
  El *all = P.data<El>();
  for (size_t i = 0; i < P.getNumel(); i++) if (static_cast<long>(all[i].id) % 3 == 0) { P.remElement(i); P.remElement(i); }
  done = std::to_string(P.getNumel()) + " " + std::to_string(P.getMaxNumel()) + " " + std::to_string(P.getMaxSize()) + " " +
         std::to_string(P.getElsize()) + " " + std::to_string(P.getMarked());
}
// what this node's block holds: count and id sum, checking every checksum
void c_scan(DdaBlock &P, const InputDF &after, OutputDF &s) {
  const El *e = P.data<El>();
  double sum = 0;
  for (size_t i = 0; i < P.getNumel(); i++) { if (e[i].sum != 3 * e[i].id + 1) ABORT("element " << e[i].id << " corrupted"); sum += e[i].id; }
  s = std::to_string(P.getNumel()) + " " + std::to_string(static_cast<long>(sum));
}
void c_bad(DdaBlock &P, const InputDF &after) { P.remElement(P.getNumel()); }
void c_wide(DdaBlock &P, const InputDF &after) { double x[3] = {1, 2, 3}; P.addElement(x); }
// which block of its node the CF holds (LuNA's P[j]), of how many
void c_which(DdaBlock &P, const InputDF &after, OutputDF &w) { w = std::to_string(P.getBlockIndex()) + "/" + std::to_string(P.getBlocksPerNode()); }
}
`;

/** The same operations on the TypeScript block: the layout the C++ block must leave. */
function reference(n: number, order: DefragOrder): Uint8Array {
  const b = DdaBlock.create(16, 0, order);
  b.resize(Math.floor(n / 2) * 16);
  for (let i = 0; i < n; i++) {
    const el = new Float64Array([i, 3 * i + 1]);
    if (b.addElement(el) === null) { b.resize(2 * b.getMaxSize()); b.addElement(el); }
  }
  const f = b.f64();
  for (let i = 0; i < b.getNumel(); i++) if (f[2 * i]! % 3 === 0) b.remElement(i);
  b.defragment();
  return b.data().slice();
}

test('a C++ ucode adds, grows, marks and reads a block; the glue defragments it as the TypeScript block does, in both orders', { skip }, async (t) => {
  const dir = fixture(t, {
    'prog.fa': `
import c_push(block \`P, int \`n, name \`done) as push;
import c_scan(block \`P, value \`after, name \`s) as scan;
import c_show(string \`tag, value \`x) as show;
sub main(int n)
{
    df da, du, sa, su;
    dynamic A(16) @ { ordered; };
    dynamic U(16);
    push(A, n, da);
    push(U, n, du);
    scan(A, da, sa);
    scan(U, du, su);
    show("23 44 704 16 8", da);
    show("15 169", sa);
    show("15 169", su);
}
`,
    'ucodes.cpp': CPP,
    'ucodes.ts': `export function c_show(want, x) { if (x.getValue() !== want) throw new Error('got ' + x.getValue() + ', wanted ' + want); }\n`,
  });
  const layer = dynamicArrays();
  const ran = await runWithResource(dir, { nodes: 1, threads: 2, args: ['23'], layers: [layer] });
  // push: 23 elements, grown from 11 to 22 to 44 elements' room; 8 ids divisible by 3 marked (each
  // twice); scan: 15 left, their id sum 0+…+22 less 3+6+…+21 (c_show checks both)
  assert.equal(ran.results[0]!.ok, true, ran.results[0]!.message);
  for (const [name, order] of [['A', 'ordered'], ['U', 'unordered']] as const) {
    const b = layer.nodes[0]!.block(name);
    assert.equal(b.getNumel(), 15);
    assert.equal(b.getMaxSize(), 704);
    assert.deepEqual(b.data(), reference(23, order), `${name}: the layout of the ${order} defragmentation`);
  }
});

test('elements a C++ ucode added are rearranged over two nodes and read there by C++', { skip }, async (t) => {
  const dir = fixture(t, {
    'prog.fa': `
import c_push(block \`P, int \`n, name \`done) as push;
import c_scan(block \`P, value \`after, name \`s) as scan;
import c_show(string \`tag, value \`x) as show;
sub main(int n)
{
    df d, t, s, c;
    dynamic P(16);
    cf p: push(P, n, d) @ { locator_cyclic: 0; };
    rearrange(P, 0, 1, t) @ { request d; };
    for k = 0..1
        cf sc[k]: scan(P, t, s[k]) @ { locator_cyclic: k; };
    global_count(P, c) @ { request s[0], s[1]; };
    show("count", c);
}
`,
    'ucodes.cpp': CPP,
    'ucodes.ts': `export function c_show(tag, x) { if (x.getInt() !== 66) throw new Error(tag + ' ' + x.getInt()); }\n`,
  });
  const layer = dynamicArrays();
  const ran = await runWithResource(dir, { nodes: 2, threads: 1, args: ['100'], layers: [layer] });
  for (const r of ran.results) assert.equal(r.ok, true, r.message);
  // 100 less the 34 multiples of 3 below 100, in equal shares
  assert.deepEqual(layer.nodes.map((d) => d.block('P').getNumel()), [33, 33]);
});

const faulty = sharedFixture({ 'ucodes.cpp': CPP });
for (const [what, call, message] of [
  ['removing an element it does not have', 'bad(P, d)', /remElement\(15\) of a block of 15 elements/],
  ['adding an element of the wrong size', 'wide(P, d)', /addElement of a 24-byte value on a block of 16-byte elements/],
] as const) {
  test(`a C++ ucode ${what} stops the run naming the fragment`, { skip }, async () => {
    const dir = faulty(`
import c_push(block \`P, int \`n, name \`done) as push;
import c_bad(block \`P, value \`after) as bad;
import c_wide(block \`P, value \`after) as wide;
sub main()
{
    df d;
    dynamic P(16);
    push(P, 23, d);
    cf oops: ${call};
}
`);
    const ran = await runWithResource(dir, { nodes: 1, threads: 1, layers: [dynamicArrays()] });
    assert.equal(ran.results[0]!.ok, false);
    assert.match(ran.results[0]!.message ?? '', message);
    assert.match(ran.results[0]!.message ?? '', /CF oops/);
  });
}

// The destination form with targets in C++ (ucenv.h destinations(targets, k)): entries index the
// ucode's value parameters holding other arrays' handles, as the TypeScript block's destinations(to).
const SEND_CPP = `#include "ucenv.h"
using namespace luna::ucenv;
struct El { double id, sum; };
extern "C" {
// n elements; id mod 3 = 0 stays, 1 goes to B, 2 to C; id 4 removed (removal wins)
void c_send(DdaBlock &A, const InputDF &B, const InputDF &C, int n, OutputDF &done) {
  A.resize(static_cast<size_t>(n) * A.getElsize());
  El *e = A.addElements<El>(static_cast<size_t>(n));
  for (int i = 0; i < n; i++) e[i] = El{double(i), 3.0 * i + 1};
  int32_t *d = A.destinations({&B, &C});
  if (A.destinations({&B, &C}) != d) ABORT("a second call with the same targets gave another array");
  for (int i = 0; i < n; i++) d[i] = i % 3 == 0 ? -1 : i % 3 - 1;
  A.remElement(4);
  done = static_cast<int>(A.getNumel());
}
void c_local(DdaBlock &A, const InputDF &B) { DF mine(5); const DF *t[2] = {&B, &mine}; A.destinations(t, 2); }
void c_again(DdaBlock &A, const InputDF &B, const InputDF &C) { A.destinations({&B}); A.destinations({&C}); }
void c_nodes(DdaBlock &A, const InputDF &B) { A.destinations({&B}); A.destinations(); }
void c_plain(DdaBlock &A, const InputDF &x) { A.destinations({&x}); }
void c_seven(OutputDF &x) { x = 7; }
// the same as c_send, the targets in one list parameter
void c_send_list(DdaBlock &A, const InputDF &T, int n, OutputDF &done) {
  A.resize(static_cast<size_t>(n) * A.getElsize());
  El *e = A.addElements<El>(static_cast<size_t>(n));
  for (int i = 0; i < n; i++) e[i] = El{double(i), 3.0 * i + 1};
  int32_t *d = A.destinations(T);
  for (int i = 0; i < n; i++) d[i] = i % 3 == 0 ? -1 : i % 3 - 1;
  A.remElement(4);
  done = static_cast<int>(A.getNumel());
}
void c_plain_list(DdaBlock &A, const InputDF &x) { A.destinations(x); }
}
`;

const LIST_TS = `export function c_list(B, C, T) { T.setValue([B.getValue(), C.getValue()]); }\n`;
const ids16 = (b: DdaBlock): number[] => Array.from(b.f64().filter((_, i) => i % 2 === 0));

for (const form of ['parameters', 'a list parameter'] as const) test(`a C++ ucode sends elements to other arrays by destination (targets: ${form}); their own counts deliver them, on another node and on its own`, { skip }, async (t) => {
  const send = form === 'parameters' ? 'cf s: send(A, B, C, n, d) @ { locator_cyclic: 0; };' : 'list(B, C, T);\n    cf s: send_list(A, T, n, d) @ { locator_cyclic: 0; };';
  const dir = fixture(t, {
    'prog.fa': `
import c_send(block \`A, value \`B, value \`C, int \`n, name \`done) as send;
import c_send_list(block \`A, value \`T, int \`n, name \`done) as send_list;
import c_list(value \`B, value \`C, name \`T) as list;
sub main(int n)
{
    df d, cb, cc, ca, T;
    dynamic A(16);
    dynamic B(16) @ { home: 1; };
    dynamic C(16);
    ${send}
    global_count(B, cb) @ { request d; };
    global_count(C, cc) @ { request d; };
    global_count(A, ca) @ { request d; };
}
`,
    'ucodes.cpp': SEND_CPP,
    'ucodes.ts': LIST_TS,
  });
  const layer = dynamicArrays();
  const ran = await runWithResource(dir, { nodes: 2, threads: 1, args: ['12'], layers: [layer] });
  for (const r of ran.results) assert.equal(r.ok, true, r.message);
  assert.deepEqual(ids16(layer.nodes[0]!.block('A')), [0, 3, 6, 9]);
  assert.deepEqual(ids16(layer.nodes[1]!.block('B')), [1, 7, 10], "B's home is node 1; element 4 was removed");
  assert.deepEqual(ids16(layer.nodes[0]!.block('C')), [2, 5, 8, 11]);
  for (const name of ['B', 'C']) {
    const f = layer.nodes[name === 'B' ? 1 : 0]!.block(name).f64();
    for (let i = 0; i < f.length; i += 2) assert.equal(f[i + 1], 3 * f[i]! + 1, `${name}: element ${f[i]} intact`);
  }
});

const badTargets = sharedFixture({ 'ucodes.cpp': SEND_CPP });
for (const [what, call, message] of [
  ['naming a target that is not one of its parameters', 'local(A, B)', /destinations of the block: target 1 is not a parameter of this ucode/],
  ['asking again with other targets', 'again(A, B, C)', /destinations of the block: asked again with other targets in the same call/],
  ['asking without targets after with them', 'nodes(A, B)', /destinations\(\) of the block: asked with targets before, without now/],
  ['naming a parameter that holds no array', 'plain(A, x)', /destinations of array A, block of node 0: target 0 is not a dynamic array/],
  ['naming a target list parameter that holds no list', 'plain_list(A, x)', /parameter 2 of C\+\+ ucode c_plain_list, given to destinations\(\) as the target list, holds no list of arrays/],
] as const) {
  test(`a C++ ucode ${what} as a destination target stops the run naming the fragment`, { skip }, async () => {
    const dir = badTargets(`
import c_local(block \`A, value \`B) as local;
import c_again(block \`A, value \`B, value \`C) as again;
import c_nodes(block \`A, value \`B) as nodes;
import c_plain(block \`A, value \`x) as plain;
import c_seven(name \`x) as seven;
import c_plain_list(block \`A, value \`x) as plain_list;
sub main()
{
    df x;
    dynamic A(16);
    dynamic B(16);
    dynamic C(16);
    seven(x);
    cf oops: ${call};
}
`);
    const ran = await runWithResource(dir, { nodes: 1, threads: 1, layers: [dynamicArrays()] });
    assert.equal(ran.results[0]!.ok, false);
    assert.match(ran.results[0]!.message ?? '', message);
    assert.match(ran.results[0]!.message ?? '', /CF oops/);
  });
}

test('several blocks a node in C++: P[j] gives the ucode block j (getBlockIndex, getBlocksPerNode) of an ordered array; rearranged over 2 nodes\' blocks', { skip }, async (t) => {
  const dir = fixture(t, {
    'prog.fa': `
import c_push(block \`P, int \`n, name \`done) as push;
import c_scan(block \`P, value \`after, name \`s) as scan;
import c_which(block \`P, value \`after, name \`w) as which;
import c_show(string \`tag, value \`x) as show;
sub main(int n)
{
    df d, t, s, w, c;
    dynamic P(16) @ { ordered; blocks: 3; };
    cf p: push(P[1], n, d) @ { locator_cyclic: 0; };
    cf w0: which(P[1], d, w[0]) @ { locator_cyclic: 0; };
    show("1/3", w[0]);
    rearrange(P, 0, 1, t) @ { request d, w[0]; };
    for k = 0..1
        for j = 0..2 {
            cf sc[k][j]: scan(P[j], t, s[k][j]) @ { locator_cyclic: k; };
            cf wh[k][j]: which(P[j], t, w[k + 1][j]) @ { locator_cyclic: k; };
        }
    show("0/3", w[1][0]);
    show("2/3", w[2][2]);
    global_count(P, c) @ { request s[0][0], s[0][1], s[0][2], s[1][0], s[1][1], s[1][2], w[1][0], w[1][1], w[1][2], w[2][0], w[2][1], w[2][2]; };
    show("15", c);
}
`,
    'ucodes.cpp': CPP,
    'ucodes.ts': `export function c_show(want, x) { if (String(x.getValue()) !== want) throw new Error('got ' + x.getValue() + ', wanted ' + want); }\n`,
  });
  const layer = dynamicArrays();
  const ran = await runWithResource(dir, { nodes: 2, threads: 1, args: ['23'], layers: [layer] });
  for (const r of ran.results) assert.equal(r.ok, true, r.message);
  // 15 elements: node 0 keeps 7 over its 3 blocks (2, 2, 3), node 1 gets 8 (2, 2, 4)
  assert.deepEqual(layer.nodes.map((d) => d.blocks('P').map((b) => b.getNumel())), [[2, 2, 3], [2, 2, 4]]);
  const ids = layer.nodes.flatMap((d) => d.blocks('P').flatMap((b) => [...b.f64()].filter((_, i) => i % 2 === 0))).sort((a, b) => a - b);
  assert.deepEqual(ids, Array.from({ length: 23 }, (_, i) => i).filter((i) => i % 3 !== 0));
});
