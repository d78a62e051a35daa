// C++ ucodes called with the DF values themselves (NativeUcode.direct, what the runtime's
// calling convention uses for them): the same outputs as through DF handles — ints, reals,
// strings, raw bytes created by the ucode, copy() of an input as the very same value, an output
// left unset as null — and a C++ error still naming the DF, by its key through the runtime's
// names (there is no handle to ask).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ParamType } from '../../src/core/imports.js';
import { bindUcodes, callUcode } from '../../src/runtime/exec/call.js';
import { buildCppUcodes, scanSources } from '../../src/ucode/cpp/build.js';
import { directFormsWritten, type DirectForm, type NativeUcodes } from '../../src/ucode/cpp/native.js';
import { DF } from '../../src/ucode/df.js';
import { T_INT, T_RAW, T_REAL, T_STRING, type DfValue } from '../../src/ucode/value.js';
import { noCompiler } from '../cpp/fixtures.js';

const skip = noCompiler();

const UCODES = `#include "ucenv.h"
#include <string>
using namespace luna::ucenv;
extern "C" {
void c_mix(int k, double r, const InputDF &s, OutputDF &i, OutputDF &d, OutputDF &t, OutputDF &unset) {
  i = k * 2; d = r / 2; t = s.get_string() + "!"; (void)unset;
}
void c_bytes(int n, const InputDF &in, OutputDF &made, OutputDF &same) {
  char *b = made.create<char>(n);
  for (int j = 0; j < n; j++) b[j] = (char)(j + 1);
  same.copy(in);
}
void c_wrong(const InputDF &x, OutputDF &y) { y = x.get_int(); }
void c_greet(const std::string &who, double r, OutputDF &o) { o = who + "/" + std::to_string((int)(r * 4)); }
// 20 parameters: a direct form past COMPACT_FROM (native.ts), its values and outputs by helper calls
void c_wide(int k, const InputDF &a0, const InputDF &a1, const InputDF &a2, const InputDF &a3, const InputDF &a4, const InputDF &a5,
    const InputDF &a6, const InputDF &a7, const InputDF &a8, OutputDF &o0, OutputDF &o1, OutputDF &o2, OutputDF &o3,
    OutputDF &o4, OutputDF &o5, OutputDF &o6, OutputDF &o7, OutputDF &o8) {
  o0 = a0.get_int() + k; o1 = a1.get_real() * 2; o2 = a2.get_string() + "?";
  char *b = o3.create<char>(a3.getSize());
  for (size_t j = 0; j < a3.getSize(); j++) b[j] = (char)(a3.getData<char>()[j] + 1);
  o4.copy(a4); o5 = a5.get_int() + a6.get_int() + a7.get_int(); (void)o6; o7.copy(a3); o8 = (int)a8.getSize();
}
}
`;

const IMPORTS: { alias: string; symbol: string; params: ParamType[]; waits: boolean }[] = [
  { alias: 'mix', symbol: 'c_mix', params: ['int', 'real', 'value', 'name', 'name', 'name', 'name'], waits: false },
  { alias: 'bytes', symbol: 'c_bytes', params: ['int', 'value', 'name', 'name'], waits: false },
  { alias: 'wrong', symbol: 'c_wrong', params: ['value', 'name'], waits: false },
  { alias: 'greet', symbol: 'c_greet', params: ['string', 'real', 'name'], waits: false },
  { alias: 'wide', symbol: 'c_wide', params: ['int', ...Array<ParamType>(9).fill('value'), ...Array<ParamType>(9).fill('name')], waits: false },
];

/** UCODES built for IMPORTS in a temporary directory the test removes after it. */
async function buildLibrary(t: TestContext): Promise<NativeUcodes> {
  const dir = mkdtempSync(join(tmpdir(), 'luna-cpp-direct-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const src = join(dir, 'ucodes.cpp');
  writeFileSync(src, UCODES);
  const built = await buildCppUcodes({ sources: [src], scans: scanSources([src]), imports: IMPORTS, tsImports: [], cacheDir: join(dir, 'cache') });
  assert.ok(built.native, JSON.stringify(built.diagnostics));
  return built.native;
}

test('C++ ucodes take the DF values directly: the outputs of DF handles, with no handles', { skip }, async (t) => {
  const native = await buildLibrary(t);
  const [mix, bytes, wrong, greet] = bindUcodes(undefined, IMPORTS, native);
  for (const f of [mix, bytes, wrong, greet]) assert.equal(typeof (f as { direct?: unknown }).direct, 'function', 'a C++ import without blocks has the direct path');

  const names = (k: string | number): string => `df<${String(k)}>`;
  const s: DfValue = { t: T_STRING, v: 'hi' };
  const outs = callUcode(mix!, IMPORTS[0]!, [21, 1.5, s, null, null, null, null], ['', '', 's', 'i', 'd', 't', 'u'], names);
  assert.deepEqual(outs, [{ t: T_INT, v: 42 }, { t: T_REAL, v: 0.75 }, { t: T_STRING, v: 'hi!' }, null]);

  // the same call through DF handles, the TypeScript convention
  const handles = [21, 1.5, new DF('s', s, false), new DF('i', undefined, true), new DF('d', undefined, true), new DF('t', undefined, true), new DF('u', undefined, true)];
  mix!(...handles);
  assert.deepEqual(handles.slice(3).map((h) => (h as DF).value ?? null), outs);

  const input: DfValue = { t: T_RAW, v: new Uint8Array(new SharedArrayBuffer(3)) };
  const [created, same] = callUcode(bytes!, IMPORTS[1]!, [4, input, null, null], ['', 'in', 'made', 'same'], names);
  assert.equal(created!.t, T_RAW);
  assert.deepEqual([...(created!.v as Uint8Array)], [1, 2, 3, 4]);
  assert.ok((created!.v as Uint8Array).buffer instanceof SharedArrayBuffer, 'bytes created in C++ are shared memory the runtime owns');
  assert.equal(same, input, 'copy() of an input is the very same value');

  // string and real parameters as they are (no DF)
  assert.deepEqual(callUcode(greet!, IMPORTS[3]!, ['ab', 2.5, null], ['', '', 'o'], names), [{ t: T_STRING, v: 'ab/10' }]);
  // a C++ error names the DF by its key through the runtime's names, still with no handle
  assert.throws(() => callUcode(wrong!, IMPORTS[2]!, [s, null], ['x.7', 'y'], names), /get_int\(\) on DF df<x\.7>/);
});

test('a direct form is written out at its first call, once: an import never called costs none', { skip }, async (t) => {
  const native = await buildLibrary(t);
  const before = directFormsWritten();
  const [mix, bytes, , greet] = bindUcodes(undefined, IMPORTS, native);
  assert.equal(directFormsWritten(), before, 'binding four imports writes no direct form');
  const form = (mix as { direct?: DirectForm }).direct!;
  assert.equal(form.kinds, 'irvnnnn', 'a form not written yet still tells its kinds (a natively stepped loop reads them)');
  assert.equal(typeof form.entry, 'number');

  const names = (k: string | number): string => `df<${String(k)}>`;
  const s: DfValue = { t: T_STRING, v: 'hi' };
  const call = (k: number): (DfValue | null)[] => callUcode(mix!, IMPORTS[0]!, [k, 1.5, s, null, null, null, null], ['', '', 's', 'i', 'd', 't', 'u'], names);
  assert.deepEqual(call(21), [{ t: T_INT, v: 42 }, { t: T_REAL, v: 0.75 }, { t: T_STRING, v: 'hi!' }, null]);
  assert.equal(directFormsWritten(), before + 1, 'the first call wrote its form');
  assert.deepEqual(call(5)[0], { t: T_INT, v: 10 });
  assert.equal(directFormsWritten(), before + 1, 'later calls use the form written');
  assert.deepEqual(callUcode(greet!, IMPORTS[3]!, ['ab', 2.5, null], ['', '', 'o'], names), [{ t: T_STRING, v: 'ab/10' }]);
  assert.equal(directFormsWritten(), before + 2);

  // takeOuts (the second half, read after a natively stepped call) writes the form when it is the first use
  (bytes as { direct?: DirectForm }).direct!.takeOuts([4, null, null, null], [null, null]);
  assert.equal(directFormsWritten(), before + 3);
});

test('an import of many parameters takes its values and gives its outputs as one of few parameters does (the compact direct form)', { skip }, async (t) => {
  const native = await buildLibrary(t);
  const wide = bindUcodes(undefined, IMPORTS, native)[4]!;
  const names = (k: string | number): string => `df<${String(k)}>`;
  const raw = new Uint8Array(new SharedArrayBuffer(4));
  raw.set([1, 2, 3, 4]);
  const ins: DfValue[] = [{ t: T_INT, v: 40 }, { t: T_REAL, v: 0.25 }, { t: T_STRING, v: 'why' }, { t: T_RAW, v: raw }, { t: T_REAL, v: 7.5 },
    { t: T_INT, v: 1 }, { t: T_INT, v: 2 }, { t: T_INT, v: 3 }, { t: T_STRING, v: 'abc' }];
  const keys = ['', ...ins.map((_, i) => `a${i}`), ...ins.map((_, i) => `o${i}`)];
  const outs = callUcode(wide, IMPORTS[4]!, [2, ...ins, ...ins.map(() => null)], keys, names);
  assert.deepEqual(outs.slice(0, 3), [{ t: T_INT, v: 42 }, { t: T_REAL, v: 0.5 }, { t: T_STRING, v: 'why?' }]);
  assert.deepEqual([...(outs[3]!.v as Uint8Array)], [2, 3, 4, 5]);
  assert.deepEqual(outs[4], ins[4], 'copy() of a real input');
  assert.deepEqual(outs[5], { t: T_INT, v: 6 });
  assert.equal(outs[6], null, 'an output left unset');
  assert.equal(outs[7], ins[3], 'copy() of a raw input is the very same value');
  assert.deepEqual(outs[8], { t: T_INT, v: 4 }, 'a string parameter\'s size counts its NUL');
  // the same call through DF handles, the TypeScript convention
  const handles = [2, ...ins.map((v, i) => new DF(`a${i}`, v, false)), ...ins.map((_, i) => new DF(`o${i}`, undefined, true))];
  wide(...handles);
  const got = handles.slice(10).map((h) => (h as DF).value ?? null);
  assert.deepEqual(got.map((v) => v?.t === T_RAW ? [...(v.v as Uint8Array)] : v), outs.map((v) => v?.t === T_RAW ? [...(v.v as Uint8Array)] : v));
});
