import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Decoder, Encoder } from '../../src/runtime/transport/codec.js';
import { FLAG_PAYLOAD, FrameParser, FrameWriter } from '../../src/runtime/transport/frame.js';

test('codec round-trips every field type', () => {
  const enc = new Encoder(16); // small start: forces growth
  const bytes = new Uint8Array(1000).map((_, i) => i * 7);
  const long = 'ж'.repeat(100) + '🙂 long';
  enc.u8(255).u32(0xdeadbeef).i32(-5).f64(Math.PI).f64(-0).varint(0).varint(127).varint(128).varint(2 ** 53 - 1);
  enc.svarint(-1).svarint(-(2 ** 40)).svarint(12345).string('').string('hello').string(long).bytes(bytes).bool(true);
  const d = new Decoder(enc.finishCopy());
  assert.equal(d.u8(), 255);
  assert.equal(d.u32(), 0xdeadbeef);
  assert.equal(d.i32(), -5);
  assert.equal(d.f64(), Math.PI);
  assert.ok(Object.is(d.f64(), -0));
  assert.deepEqual([d.varint(), d.varint(), d.varint(), d.varint()], [0, 127, 128, 2 ** 53 - 1]);
  assert.deepEqual([d.svarint(), d.svarint(), d.svarint()], [-1, -(2 ** 40), 12345]);
  assert.deepEqual([d.string(), d.string(), d.string()], ['', 'hello', long]);
  assert.deepEqual(d.bytes(), bytes);
  assert.equal(d.bool(), true);
  assert.equal(d.remaining, 0);
  assert.throws(() => d.u8(), /truncated/);
});

test('codec: short strings (copied byte by byte when ASCII) and numbers read from any offset', () => {
  const strs = ['a', 'x#12.7.3', 'é', 'ab\u007f', 'abc\u0080', '1_2_3_4_5_6_7_8_9_10_11_12_13_14', '1_2_3_4_5_6_7_8_9_10_11_12_13_14_', 'ключ.5', '\u0000'];
  const enc = new Encoder(4);
  enc.u8(9); // the message starts one byte into its buffer below
  for (const s of strs) enc.string(s).i32(-(2 ** 31)).u32(2 ** 32 - 1).f64(-1.5e300);
  const all = enc.finishCopy();
  const d = new Decoder(all.subarray(1));
  for (const s of strs) {
    assert.equal(d.string(), s);
    assert.equal(d.i32(), -(2 ** 31));
    assert.equal(d.u32(), 2 ** 32 - 1);
    assert.equal(d.f64(), -1.5e300);
  }
  assert.equal(d.remaining, 0);
});

test('codec: reset reuses the buffer; varint rejects negatives', () => {
  const enc = new Encoder();
  enc.string('abc');
  assert.equal(enc.reset().u8(1).finish().length, 1);
  assert.throws(() => enc.varint(-1), RangeError);
  assert.throws(() => new Decoder(new Uint8Array([0xff, 0xff])).varint(), /truncated/);
});

test('frames survive arbitrary chunking, including a frame split byte by byte', () => {
  const w = new FrameWriter();
  const big = new Uint8Array(100_000).map((_, i) => i & 255);
  w.append(0, 7, new Uint8Array([1, 2, 3]), undefined);
  w.append(0, 8, new Uint8Array(0), big);
  w.append(0, 9, new Uint8Array([4]), new Uint8Array(0));
  const wire = Buffer.concat(w.take());
  for (const step of [1, 5, 13, 4096, wire.length]) {
    const got: [number, number, number[], number | undefined][] = [];
    const p = new FrameParser((flags, tag, body, payload) => {
      if (payload) assert.ok(flags & FLAG_PAYLOAD);
      if (tag === 8) assert.ok(Buffer.from(big).equals(payload!));
      got.push([tag, flags & FLAG_PAYLOAD, [...body], payload?.length]);
    }, 2 ** 32 - 1);
    for (let i = 0; i < wire.length; i += step) p.push(wire.subarray(i, i + step));
    assert.deepEqual(got, [
      [7, 0, [1, 2, 3], undefined],
      [8, 1, [], 100_000],
      [9, 1, [4], 0],
    ]);
  }
});

test('frame parser rejects oversized and malformed frames', () => {
  const p = new FrameParser(() => {}, 1024);
  assert.throws(() => p.push(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')), /exceeds the limit|malformed/);
  const bad = Buffer.alloc(13);
  bad.writeUInt32LE(5, 0); // shorter than its own header
  assert.throws(() => new FrameParser(() => {}, 1024).push(bad), /malformed/);
});
