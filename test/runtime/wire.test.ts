// The encoding of CF environments between nodes: every kind of slot comes back as it was sent
// (integers travel as 32-bit integers, other numbers as doubles, -0 included).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Decoder, Encoder } from '../../src/runtime/transport/codec.js';
import { decodeEnv, encodeEnv } from '../../src/runtime/cluster/wire.js';

test('a CF environment round-trips: undefined, integers at the int32 bounds and beyond, -0, doubles, DF keys', () => {
  const env: unknown[] = [undefined, 0, -0, 7, -3, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1.5, NaN, Infinity, -Infinity, 'x#1.2', 'ключ.3', ''];
  const e = new Encoder(8);
  encodeEnv(e, env);
  e.u8(42);
  const d = new Decoder(e.finishCopy());
  const back = decodeEnv(d);
  assert.equal(back.length, env.length);
  env.forEach((v, i) => assert.ok(Object.is(back[i], v), `slot ${i}: sent ${String(v)}, got ${String(back[i])}`));
  assert.equal(d.u8(), 42, 'the decoder stops right after the environment');
});
