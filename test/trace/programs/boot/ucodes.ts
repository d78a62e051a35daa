export function c_spin(ms: number, x: any) { const end = performance.now() + ms; while (performance.now() < end); x.setInt(1); }
export function c_next(a: any, b: any) { b.setInt(a.getInt() + 1); }
export function c_show(a: any) { console.log('boot', a.getInt()); }
