// Names written straight into an export's output buffer as UTF-8, without making the string:
// a CF instance's name (`link[5][2]`) is its label and indices, a DF's (`x[3][4]`) its key
// (`x#12.3.4`), written at 10^6 CFs and DFs, so making them into strings first would only make
// garbage. Both binary writers (Perfetto protobuf, OTF2's record files) use these; the caller has
// made room (cfNameRoom, dfNameRoom bytes).

/** Bytes a CF name may take: 3 per UTF-16 unit of the label, 13 per index (`[-2147483648]`). */
export const cfNameRoom = (label: string, idx: readonly number[] | null): number => 3 * label.length + (idx ? 24 * idx.length : 0);

/** s as UTF-8 at b[p]; returns the position after it. */
export function putText(b: Buffer, p: number, s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return p + b.write(i === 0 ? s : s.slice(i), p);
    b[p++] = c;
  }
  return p;
}

/** Units [from, to) of s as UTF-8 at b[p]; returns the position after them. */
function putUnits(b: Buffer, p: number, s: string, from: number, to: number): number {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return p + b.write(s.slice(i, to), p);
    b[p++] = c;
  }
  return p;
}

/** Bytes a DF name may take: 3 per UTF-16 unit of its key (an index's `.` becomes two brackets). */
export const dfNameRoom = (key: string): number => 3 * key.length + 2;

/** A DF key's display name (`x#12.3.4` → `x[3][4]`, as displayDf makes it) at b[p]; returns the position after it. */
export function putDfName(b: Buffer, p: number, key: string): number {
  const hash = key.indexOf('#');
  if (hash < 0) return putUnits(b, p, key, 0, key.length);
  p = putUnits(b, p, key, 0, hash);
  let i = key.indexOf('.', hash);
  if (i < 0) return p;
  while (i < key.length) {
    const next = key.indexOf('.', i + 1);
    const end = next < 0 ? key.length : next;
    b[p++] = 0x5b;
    p = putUnits(b, p, key, i + 1, end);
    b[p++] = 0x5d;
    i = end;
  }
  return p;
}

/** An integer in decimal at b[p] (as String(v) writes it); returns the position after it. */
export function putInt(b: Buffer, p: number, v: number): number {
  if (!Number.isSafeInteger(v)) return putText(b, p, String(v));
  if (v < 0) { b[p++] = 0x2d; v = -v; }
  let digits = 1;
  for (let x = v; x >= 10; x = Math.floor(x / 10)) digits++;
  for (let k = p + digits - 1; k >= p; k--) { b[k] = 0x30 + (v % 10); v = Math.floor(v / 10); }
  return p + digits;
}

/** `label[i][j]` (displayCf) at b[p]; returns the position after it. */
export function putCfName(b: Buffer, p: number, label: string, idx: readonly number[] | null): number {
  p = putText(b, p, label);
  if (idx) for (const i of idx) { b[p++] = 0x5b; p = putInt(b, p, i); b[p++] = 0x5d; }
  return p;
}
