// Encoding of the values and environments that cross nodes. Raw DF bytes travel as the
// transport's payload (never copied into the body).
import { deserialize, serialize } from 'node:v8';
import { Decoder, Encoder } from '../transport/codec.js';
import { T_INT, T_JS, T_RAW, T_REAL, T_STRING, sharedBytes, type DfValue } from '../../ucode/value.js';

/**
 * Write a value into the body; a raw value returns its bytes to send as payload (the sender pins
 * them when the transport keeps them rather than copying: see DataChannel).
 */
export function encodeValue(e: Encoder, v: DfValue, inline = false): Uint8Array | undefined {
  e.u8(v.t);
  switch (v.t) {
    case T_INT: e.i32(v.v); return undefined;
    case T_REAL: e.f64(v.v); return undefined;
    case T_STRING: e.string(v.v); return undefined;
    case T_RAW: if (inline) { e.bytes(v.v); return undefined; } return v.v;
    default: e.bytes(serialize(v.v)); return undefined;
  }
}

export function decodeValue(d: Decoder, payload: Uint8Array | undefined, inline = false): DfValue {
  const t = d.u8();
  switch (t) {
    case T_INT: return { t: T_INT, v: d.i32() };
    case T_REAL: return { t: T_REAL, v: d.f64() };
    case T_STRING: return { t: T_STRING, v: d.string() };
    case T_RAW: return { t: T_RAW, v: sharedBytes(inline ? d.bytes() : payload ?? new Uint8Array(0)) };
    case T_JS: return { t: T_JS, v: deserialize(d.bytes()) };
    default: throw new Error(`bad DF value tag ${t}`);
  }
}

/**
 * Environment slots: undefined, number or string (DF keys are strings). Integers (loop
 * variables, sizes) travel as 32-bit integers: half the bytes, and read back as small integers
 * rather than doubles.
 */
export function encodeEnv(e: Encoder, env: unknown[]): void {
  e.varint(env.length);
  for (const x of env) {
    if (typeof x === 'number') {
      if ((x | 0) === x && !Object.is(x, -0)) { e.u8(3); e.i32(x); } else { e.u8(1); e.f64(x); }
    } else if (typeof x === 'string') { e.u8(2); e.string(x); }
    else e.u8(0);
  }
}

export function decodeEnv(d: Decoder): unknown[] {
  const n = d.varint();
  const env = new Array<unknown>(n);
  for (let i = 0; i < n; i++) {
    const k = d.u8();
    env[i] = k === 3 ? d.i32() : k === 1 ? d.f64() : k === 2 ? d.string() : undefined;
  }
  return env;
}
