// The value of a data fragment, as it travels between the system thread, workers and nodes.
// Small tagged objects: ints/reals/strings travel inline; raw bytes live in SharedArrayBuffer
// so threads of one node share them without copies; `js` holds any structured-cloneable value.

export const T_INT = 1;
export const T_REAL = 2;
export const T_STRING = 3;
export const T_RAW = 4;
export const T_JS = 5;

export type DfValue =
  | { t: typeof T_INT; v: number }
  | { t: typeof T_REAL; v: number }
  | { t: typeof T_STRING; v: string }
  | { t: typeof T_RAW; v: Uint8Array }
  | { t: typeof T_JS; v: unknown };

/**
 * Every `{ t, v }` literal in this isolate shares one hidden class, whose `v` field V8 first
 * types by the first value stored (a small integer, a double, an object). A later value of
 * another kind generalises the field and deprecates the class: every function optimised on it
 * deoptimises ('wrong map'). A program's first values are often of one kind (a rehearsal's
 * placeholders, the ints of a loop's first fragments) and its later ones of another (reals):
 * the field is generalised here, at load, before anything is optimised.
 */
export const SHAPES = [{ t: T_INT, v: 1 }, { t: T_REAL, v: 0.5 }, { t: T_STRING, v: '' }, { t: T_RAW, v: new Uint8Array(0) }] as const;

export const TYPE_NAMES = ['unset', 'int', 'real', 'string', 'raw', 'js'] as const;

export function intValue(v: number): DfValue { return { t: T_INT, v: v | 0 }; }
export function realValue(v: number): DfValue { return { t: T_REAL, v }; }
export function stringValue(v: string): DfValue { return { t: T_STRING, v }; }

/** Byte size as LuNA's getSize(): int 4, real 8, string length+1, raw byte length. */
export function valueSize(x: DfValue): number {
  switch (x.t) {
    case T_INT: return 4;
    case T_REAL: return 8;
    case T_STRING: return Buffer.byteLength(x.v) + 1;
    case T_RAW: return x.v.byteLength;
    default: return estimateJsSize(x.v);
  }
}

function estimateJsSize(v: unknown): number {
  if (ArrayBuffer.isView(v)) return v.byteLength;
  if (v instanceof ArrayBuffer || v instanceof SharedArrayBuffer) return v.byteLength;
  if (typeof v === 'string') return v.length + 1;
  return 8;
}

/** LuNA's to_string form: DF<int>(7), DF<real>(0.5), … (for messages) */
export function describeValue(x: DfValue): string {
  switch (x.t) {
    case T_INT: return `int ${x.v}`;
    case T_REAL: return `real ${x.v}`;
    case T_STRING: return `string ${JSON.stringify(x.v)}`;
    case T_RAW: return `raw ${x.v.byteLength} bytes`;
    default: return 'js value';
  }
}

/** A Uint8Array over shared memory (copied once when the source is not shared). */
export function sharedBytes(src: ArrayBufferView): Uint8Array {
  const bytes = new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
  if (bytes.buffer instanceof SharedArrayBuffer) return bytes;
  const out = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
  out.set(bytes);
  return out;
}
