// The DF handle that atomic code fragments (ucodes) receive for `value` and `name` parameters.
// It mirrors LuNA's C++ DF class (docs/language.md §7.3) with JS-friendly accessors. A handle is
// created per CF execution; outputs are collected by the worker after the ucode returns.
import {
  T_INT, T_JS, T_RAW, T_REAL, T_STRING, TYPE_NAMES, sharedBytes, valueSize, type DfValue,
} from './value.js';
import { takeRaw } from './recycle.js';

/**
 * The largest raw DF: a frame between nodes carries at most 4 GiB (a u32 length) including its
 * header and body, and Node 20's typed arrays hold at most 4 GiB.
 */
export const MAX_RAW_BYTES = 2 ** 32 - 65536;

export class UcodeError extends Error {}

/** How DF.create() and its typed forms make an output's buffer. */
export interface CreateOptions {
  /**
   * false: the bytes are left as they are (a recycled buffer holds a freed DF's bytes), for a
   * ucode that writes every one of them; the fill of a large output costs about as much as
   * writing it once. Default true: zero-filled.
   */
  zero?: boolean;
}

type TypedArrayCtor<A> = { new (buffer: ArrayBufferLike, byteOffset: number, length: number): A; BYTES_PER_ELEMENT: number };

export class DF {
  /** @internal */ value: DfValue | undefined;
  /** @internal */ readonly writable: boolean;
  /** @internal */ private readonly key: string | number;
  /** @internal */ private readonly nameOf: (key: string | number) => string;

  /**
   * @internal `key` identifies the DF to `nameOf` (the runtime's DF key, or its number in a
   * batch); the readable name is computed only when a message or getName() needs it.
   */
  constructor(key: string | number, value: DfValue | undefined, writable: boolean, nameOf: (key: string | number) => string = String) {
    this.key = key;
    this.nameOf = nameOf;
    this.value = value;
    this.writable = writable;
  }

  // ------------------------------------------------------------------ setters (outputs)
  setInt(n: number): void {
    if (typeof n !== 'number' || !Number.isFinite(n)) throw new UcodeError(`setInt(${String(n)}) on DF ${this.dfName}: not a finite number`);
    this.set({ t: T_INT, v: Math.trunc(n) | 0 });
  }
  setReal(x: number): void {
    if (typeof x !== 'number') throw new UcodeError(`setReal(${String(x)}) on DF ${this.dfName}: not a number`);
    this.set({ t: T_REAL, v: x });
  }
  setString(s: string): void {
    if (typeof s !== 'string') throw new UcodeError(`setString on DF ${this.dfName}: not a string`);
    this.set({ t: T_STRING, v: s });
  }
  /** Any structured-cloneable JS value (typed arrays over shared memory stay shared). */
  setValue(v: unknown): void {
    if (v instanceof Uint8Array && v.buffer instanceof SharedArrayBuffer) this.set({ t: T_RAW, v });
    else this.set({ t: T_JS, v });
  }
  /**
   * A writable raw buffer of `byteLength` bytes in shared memory, at most MAX_RAW_BYTES,
   * zero-filled unless `{ zero: false }`. Its memory may be that of a raw DF freed earlier
   * (ucode/recycle.ts): without the zero fill it holds that DF's bytes, as C++ create() does, so a
   * ucode that writes every byte it made saves the fill. A view of a DF's bytes must not be kept
   * after the ucode returns.
   */
  create(byteLength: number, opts?: CreateOptions): Uint8Array {
    if (!(Number.isInteger(byteLength) && byteLength >= 0 && byteLength <= MAX_RAW_BYTES)) {
      throw new RangeError(`create(${byteLength}) on DF ${this.getName()}: a raw DF holds a whole number of bytes from 0 to ${MAX_RAW_BYTES} (4 GiB less 64 KiB, the most one message between nodes carries)`);
    }
    const bytes = takeRaw(byteLength, 0, opts?.zero !== false);
    this.set({ t: T_RAW, v: bytes });
    return bytes;
  }
  createFloat64Array(n: number, opts?: CreateOptions): Float64Array { return view(this.create(n * 8, opts), Float64Array); }
  createInt32Array(n: number, opts?: CreateOptions): Int32Array { return view(this.create(n * 4, opts), Int32Array); }
  /** Store raw bytes (copied once into shared memory unless already shared). */
  setData(bytes: ArrayBufferView): void { this.set({ t: T_RAW, v: sharedBytes(bytes) }); }
  /** Share the other DF's value (no copy), like LuNA's copy(df). */
  copy(input: DF): void { this.set(input.need('copy')); }

  // ------------------------------------------------------------------ getters (inputs)
  getInt(): number { return this.typed(T_INT, 'getInt') as number; }
  getReal(): number { return this.typed(T_REAL, 'getReal') as number; }
  getString(): string { return this.typed(T_STRING, 'getString') as string; }
  /** The natural JS value: number, string, Uint8Array (raw) or the stored JS value. */
  getValue(): unknown { return this.need('getValue').v; }
  getData(): Uint8Array { return this.typed(T_RAW, 'getData') as Uint8Array; }
  getFloat64Array(): Float64Array { return view(this.getData(), Float64Array); }
  getInt32Array(): Int32Array { return view(this.getData(), Int32Array); }
  getSize(): number { return valueSize(this.need('getSize')); }
  /** cast_int / cast_real / cast_string of the original: convert instead of asserting. */
  castInt(): number { const x = this.need('castInt'); return x.t === T_STRING ? parseStrict(x.v, this.dfName) | 0 : Math.trunc(Number(x.v)); }
  castReal(): number { const x = this.need('castReal'); return x.t === T_STRING ? parseStrict(x.v, this.dfName) : Number(x.v); }
  castString(): string { const x = this.need('castString'); return x.t === T_REAL ? x.v.toFixed(6) : String(x.v); }
  isSet(): boolean { return this.value !== undefined; }
  getType(): string { return TYPE_NAMES[this.value?.t ?? 0]; }
  getName(): string { return this.dfName; }
  toString(): string { return `DF<${this.getType()}>(${this.value ? String(this.value.v) : ''})`; }

  // ------------------------------------------------------------------ internals
  /** @internal */ get dfName(): string { return this.nameOf(this.key); }
  private set(v: DfValue): void {
    if (!this.writable) throw new UcodeError(`DF ${this.dfName} is an input (value parameter): it cannot be set`);
    if (this.value !== undefined) throw new UcodeError(`DF ${this.dfName} is already set: a DF is assigned once`);
    this.value = v;
  }
  private need(op: string): DfValue {
    if (this.value === undefined) throw new UcodeError(`${op}() on DF ${this.dfName}: the DF has no value yet`);
    return this.value;
  }
  private typed(t: number, op: string): unknown {
    const x = this.need(op);
    if (x.t !== t) throw new UcodeError(`${op}() on DF ${this.dfName} which holds ${TYPE_NAMES[x.t]}${x.t <= T_STRING ? ` ${JSON.stringify(x.v)}` : ''}`);
    return x.v;
  }
}

function parseStrict(s: string, name: string): number {
  const x = Number(s.trim());
  if (s.trim() === '' || Number.isNaN(x)) throw new UcodeError(`cannot convert string ${JSON.stringify(s)} of DF ${name} to a number`);
  return x;
}

function view<A>(bytes: Uint8Array, Ctor: TypedArrayCtor<A>): A {
  if (bytes.byteOffset % Ctor.BYTES_PER_ELEMENT !== 0 || bytes.byteLength % Ctor.BYTES_PER_ELEMENT !== 0) {
    throw new UcodeError(`raw DF of ${bytes.byteLength} bytes is not a whole number of ${Ctor.BYTES_PER_ELEMENT}-byte elements`);
  }
  return new Ctor(bytes.buffer, bytes.byteOffset, bytes.byteLength / Ctor.BYTES_PER_ELEMENT);
}

/**
 * A `value` parameter as a ucode may use it: an input, to read. (`luna check` checks each ucode
 * against its import with these types; the runtime passes a DF.)
 */
export type DfReader = Pick<DF,
  'getInt' | 'getReal' | 'getString' | 'getValue' | 'getData' | 'getFloat64Array' | 'getInt32Array' | 'getSize'
  | 'castInt' | 'castReal' | 'castString' | 'isSet' | 'getType' | 'getName' | 'toString'>;

/** A `name` parameter: an output to set once, and to read once set. */
export type DfWriter = DfReader & Pick<DF,
  'setInt' | 'setReal' | 'setString' | 'setValue' | 'create' | 'createFloat64Array' | 'createInt32Array' | 'setData'> & {
  /** share the value of an input (no copy) */
  copy(input: DfReader): void;
};
