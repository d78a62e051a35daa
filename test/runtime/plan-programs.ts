// The programs of the loop-plan tests (loop-plans.test.ts, loop-inline.test.ts, test/trace/planned-loops.test.ts):
// their ucodes (c_step's `kind` says what a step does besides computing: 'ok', 'throw' at step
// 37 of column 1, 'names' its DFs' names at steps 1 and 37, 'late:N' sleeps 200 ms at step N), a
// chain on one lane, and a chain whose outputs also escape the loop.

// ~100 µs of work per step keeps the CFs on the workers (tiny codes run on the system thread).
export const UCODES = `
type In = { getInt(): number; getName(): string };
type Out = { setInt(v: number): void; getName(): string };
function spin(): void { const until = performance.now() + 0.1; while (performance.now() < until) { /* work */ } }
export function c_init(x: number, v: Out): void { v.setInt(x + 1); }
export function c_step(kind: string, t: number, x: number, a: In, b: In, v: Out): void {
  spin();
  if (kind === 'throw' && t === 37 && x === 1) throw new Error('boom at step ' + t);
  if (kind === 'names' && (t === 1 || t === 37)) console.log('names ' + t + ' ' + x + ': ' + a.getName() + ' ' + b.getName() + ' ' + v.getName());
  if (kind === 'late:' + t) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  v.setInt((3 * a.getInt() + 5 * b.getInt() + t + x) % 1000003);
}
export function c_print(x: number, v: In): void { console.log('v[' + x + '] = ' + v.getInt()); }
export function c_start(v: Out): void { v.setInt(7); }
export function c_link(a: In, i: number, v: Out): void { spin(); v.setInt((a.getInt() * 31 + i) % 1000003); }
export function c_show(i: number, v: In): void { console.log('x[' + i + '] = ' + v.getInt()); }
export function c_sq(i: number, v: Out): void { spin(); v.setInt(i * i); }
`;

// a chain (one site: one lane), its first input made before the loop, its last read after it
export const CHAIN = `import c_start(name \`v) as start;
import c_link(value \`a, int \`i, name \`v) as link;
import c_show(int \`i, value \`v) as show;
sub main(int n)
{
    df x;
    start(x[0]);
    for i = 0..n-1
        cf l[i]: link(x[i], i, x[i + 1]) @ { req_count x[i + 1] = 1; };
    show(n, x[n]);
}
`;

// every output read once inside the loop and once after it: each escapes with one read left
export const ESCAPING = CHAIN.replace('req_count x[i + 1] = 1', 'req_count x[i + 1] = 2').replace('    show(n, x[n]);', '    for i = 1..n show(i, x[i]) @ { req_count x[i] = 1; };');

export function chainExpected(n: number, all: boolean): string[] {
  const out: string[] = [];
  let x = 7;
  for (let i = 0; i < n; i++) { x = (x * 31 + i) % 1000003; if (all || i === n - 1) out.push(`x[${i + 1}] = ${x}`); }
  return out.sort();
}

// a chain whose kept DFs a tail of statements names once more from outside the loop (the misuse
// tests: read again or assigned again, before or after the loop made it)
export const OUTSIDE = (tail: string): string => `import c_start(name \`v) as start;
import c_link(value \`a, int \`i, name \`v) as link;
import c_show(int \`i, value \`v) as show;
sub later(int v, name y, int k) { show(k, y[k]); }
sub again(int v, name y, int k) { start(y[k]); }
sub main(int n)
{
    df x;
    start(x[0]);
    for i = 0..n-1
        cf l[i]: link(x[i], i, x[i + 1]) @ { req_count x[i + 1] = 1; };
${tail}
}
`;
