// Names written straight into an export's output buffer as UTF-8, without making the string:
// a CF instance's name (`link[5][2]`) is its label and indices, written at 10^6 CFs once each, so
// joining them into a string first would only make garbage. Both binary writers (Perfetto
// protobuf, OTF2's record files) use these; the caller has made room (cfNameRoom bytes).

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
