// The hand protobuf encoder under the Perfetto export, read back by protobufjs' decoder: varints
// at their byte boundaries, negative int64, doubles, ASCII and non-ASCII strings (whole and written in pieces), and embedded
// messages written in place whose length outgrows the one-byte slot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { displayCf } from '../../src/core/cfid.js';
import { cfNameRoom, dfNameRoom, putCfName, putDfName } from '../../src/trace/export/text.js';
import { displayDf } from '../../src/core/dfkey.js';
import { RecordFile } from '../../src/trace/export/otf2-stream.js';
import { ProtoBuf } from '../../src/trace/export/proto-encode.js';

const root = protobuf.Root.fromJSON({
  nested: {
    Inner: { fields: { n: { type: 'uint64', id: 1 }, s: { type: 'string', id: 2 } } },
    Outer: {
      fields: {
        u: { type: 'uint64', id: 1 },
        i: { type: 'int64', id: 2 },
        d: { type: 'double', id: 3 },
        s: { type: 'string', id: 4 },
        inner: { rule: 'repeated', type: 'Inner', id: 5 },
        big: { type: 'uint64', id: 300 },
      },
    },
  },
});
const Outer = root.lookupType('Outer');

function decode(b: ProtoBuf): Record<string, unknown> {
  return Outer.toObject(Outer.decode(b.buf.subarray(0, b.len)), { longs: String }) as Record<string, unknown>;
}

test('varints round-trip at every byte boundary up to 2^53', () => {
  for (const v of [0, 1, 127, 128, 16383, 16384, 2 ** 21 - 1, 2 ** 21, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 35 + 7, 2 ** 53 - 1]) {
    const b = new ProtoBuf(4);
    b.uint(1, v);
    b.uint(300, v);
    const o = decode(b);
    assert.equal(o.u, String(v));
    assert.equal(o.big, String(v), 'a two-byte tag');
  }
});

test('negative int64 as 64-bit two\'s complement, doubles exact', () => {
  for (const v of [-1, -2, -128, -(2 ** 31), -(2 ** 40) - 3]) {
    const b = new ProtoBuf();
    b.int(2, v);
    b.double(3, v / 3);
    const o = decode(b);
    assert.equal(o.i, String(v));
    assert.equal(o.d, v / 3);
  }
});

test('strings: short ASCII, non-ASCII, long', () => {
  for (const s of ['', 'link[5]', 'naïve ✓ 数据', 'x'.repeat(127), 'y'.repeat(128), 'é'.repeat(100), 'z'.repeat(70000)]) {
    const b = new ProtoBuf(8);
    b.string(4, s);
    assert.equal(decode(b).s, s);
  }
});

test('embedded messages written in place, short and long (the body moved to fit a longer length)', () => {
  const b = new ProtoBuf(16);
  b.uint(1, 9);
  const lens = [0, 5, 126, 127, 128, 300, 20000];
  for (const n of lens) {
    const at = b.open(5);
    b.uint(1, n);
    b.string(2, 'q'.repeat(n));
    b.close(at);
  }
  b.int(2, -5);
  const o = decode(b) as { u: string; i: string; inner: { n: string; s?: string }[] };
  assert.equal(o.u, '9');
  assert.equal(o.i, '-5');
  assert.deepEqual(o.inner.map((x) => [Number(x.n), (x.s ?? '').length]), lens.map((n) => [n, n]));
  const m = new ProtoBuf();
  m.uint(1, 3);
  const c = new ProtoBuf(1);
  c.message(5, m);
  assert.deepEqual((decode(c) as { inner: { n: string }[] }).inner.map((x) => x.n), ['3']);
});

test('a string field written in pieces equals the joined string, byte for byte (ASCII, non-ASCII, past the one-byte length)', () => {
  for (const parts of [['DF ', 'x[3]', ' from node ', '1'], ['a', 'naïve', ', ', '数据 ✓'], ['é'.repeat(60), ', ', 'b'.repeat(100)], ['']]) {
    const joined = new ProtoBuf(4);
    joined.string(4, parts.join(''));
    const pieces = new ProtoBuf(4);
    const at = pieces.open(4);
    for (const p of parts) pieces.text(p);
    pieces.close(at);
    assert.deepEqual(pieces.buf.subarray(0, pieces.len), joined.buf.subarray(0, joined.len));
    assert.equal(decode(pieces).s, parts.join(''));
  }
});

test('a CF name written from its label and indices equals displayCf, byte for byte', () => {
  const cases: [string, number[] | null][] = [['link', null], ['link', [5]], ['a', [0, -1, 123456789, 2147483647, -2147483648]], ['réseau', [3, 10]], ['_l12', []], ['x', [2 ** 40, 0.5]]];
  for (const [label, idx] of cases) {
    const want = Buffer.from(displayCf(label, idx), 'utf8');
    const b = Buffer.alloc(cfNameRoom(label, idx) + 1, 0xee);
    const end = putCfName(b, 0, label, idx);
    assert.ok(b.subarray(0, end).equals(want), `${label} ${JSON.stringify(idx)}: ${b.subarray(0, end).toString()}`);
    assert.ok(end <= cfNameRoom(label, idx), 'within the room it asked for');
    const f = new RecordFile(-1);
    f.utf8Cf(label, idx);
    const g = new RecordFile(-1);
    g.utf8(displayCf(label, idx));
    const raw = (r: RecordFile): Buffer => { const x = r as unknown as { buf: Buffer; len: number }; return x.buf.subarray(0, x.len); };
    assert.ok(raw(f).equals(raw(g)), `OTF2 record of ${label}`);
  }
});

test('a DF name written from its key equals displayDf, byte for byte', () => {
  const keys = ['x#0.3.4', 'x#', 'x#12', 'x#12_3', 'y#~0123456789abcdef0123456789abcdef.7', 'z#1_2.10.-6', 'b#.5', 'plain', 'odd.name', 'réseau#4.1', 'x#4.réseau', 'x#4..', 'x#4.1.', '#', '', 'a#b#c.1', '\ud800#1.2'];
  for (const key of keys) {
    const want = Buffer.from(displayDf(key), 'utf8');
    const b = Buffer.alloc(dfNameRoom(key) + 1, 0xee);
    const end = putDfName(b, 0, key);
    assert.ok(b.subarray(0, end).equals(want), `${JSON.stringify(key)}: ${JSON.stringify(b.subarray(0, end).toString())} against ${JSON.stringify(displayDf(key))}`);
    assert.ok(end <= dfNameRoom(key), 'within the room it asked for');
    assert.equal(b[dfNameRoom(key)], 0xee, 'nothing written past the room');
    const o = new ProtoBuf(4);
    o.text('<'); o.dfName(key); o.text('>');
    assert.ok(o.buf.subarray(0, o.len).equals(Buffer.concat([Buffer.from('<'), want, Buffer.from('>')])), `in a growable buffer: ${JSON.stringify(key)}`);
  }
});

test('an OTF2 record string is its UTF-8 byte count and bytes (ASCII, non-ASCII, lone surrogates, empty)', () => {
  for (const s of ['', 'gid_12_3', 'réseau', 'x[1] → y', '\ud800x', 'a'.repeat(300) + 'é']) {
    const f = new RecordFile(-1);
    f.u8(0x53).utf8(s).u8(0x2e);
    const x = f as unknown as { buf: Buffer; len: number };
    const want = Buffer.from(s, 'utf8'), len = Buffer.alloc(4);
    len.writeUInt32LE(want.length);
    assert.ok(x.buf.subarray(0, x.len).equals(Buffer.concat([Buffer.from([0x53]), len, want, Buffer.from([0x2e])])), JSON.stringify(s));
  }
});
