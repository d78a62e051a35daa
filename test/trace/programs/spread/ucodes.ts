export function c_init(i: number, x: any) { x.setInt(i * i); }
export function c_add(a: any, b: any, c: any) { c.setInt(a.getInt() + b.getInt()); }
export function c_show(a: any) { console.log("y", a.getName(), a.getInt()); }
export function c_big(n: number, b: any) { const a = b.createFloat64Array(n); for (let i = 0; i < n; i++) a[i] = i; }
export function c_sum(b: any) { const a = b.getFloat64Array(); let s = 0; for (const v of a) s += v; console.log('sum', s, a.length); }
