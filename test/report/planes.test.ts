// Packed columns survive the byte planes and deflate exactly, for every element type and length.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deflateRawSync } from 'node:zlib';
import { fromPlanes, toPlanes } from '../../src/report/planes.js';
import { pack, unpack } from '../../src/report/section.js';

test('every column type packs and unpacks to the same values, empty and odd lengths included', () => {
  for (const n of [0, 1, 7, 1000]) {
    const cols = [
      Uint32Array.from({ length: n }, (_, i) => (i * 2654435761) >>> 0),
      Int32Array.from({ length: n }, (_, i) => (i % 3 === 0 ? -i : i * 1000)),
      Uint16Array.from({ length: n }, (_, i) => i * 37),
      Float32Array.from({ length: n }, (_, i) => i / 3),
      Float64Array.from({ length: n }, (_, i) => i * Math.PI - 1e12),
    ];
    for (const a of cols) {
      const back = unpack(pack(a));
      assert.equal(back.constructor, a.constructor);
      assert.deepEqual([...back], [...a], `${a.constructor.name} of ${n}`);
    }
  }
});

test('byte planes put each byte position together and invert exactly', () => {
  const a = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual([...toPlanes(a, 4)], [1, 5, 2, 6, 3, 7, 4, 8]);
  assert.deepEqual([...fromPlanes(toPlanes(a, 2), 2)], [...a]);
  assert.deepEqual([...fromPlanes(toPlanes(a, 8), 8)], [...a]);
});

test('small integers deflate smaller as planes than as plain bytes', () => {
  const a = Uint32Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 50_000);
  const plain = deflateRawSync(new Uint8Array(a.buffer), { level: 6 }).toString('base64').length;
  assert.ok(pack(a).z.length < plain * 0.8, `${pack(a).z.length} against ${plain}`);
});
