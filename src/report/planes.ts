// Byte planes of a typed array's bytes: all first bytes, then all second bytes, and so on. The
// page's integer and float columns hold small or slowly varying values, so their high bytes are
// long runs that deflate to almost nothing once they sit together (a report's columns shrink
// 2.7× more than deflate alone). Self-contained: the page embeds fromPlanes as source text.

/** The bytes of `a` (elements of `width` bytes) as planes. */
export function toPlanes(a: Uint8Array, width: number): Uint8Array {
  if (width === 1) return a;
  const n = a.length / width, out = new Uint8Array(a.length);
  for (let b = 0; b < width; b++) for (let i = 0, o = b * n; i < n; i++) out[o + i] = a[i * width + b]!;
  return out;
}

/** The inverse of toPlanes. */
export function fromPlanes(p: Uint8Array, width: number): Uint8Array {
  if (width === 1) return p;
  const n = p.length / width, out = new Uint8Array(p.length);
  for (let b = 0; b < width; b++) for (let i = 0, o = b * n; i < n; i++) out[i * width + b] = p[o + i]!;
  return out;
}
