// A two-column stencil whose steps read both columns of the step before: each step's CFs feed
// the next step's on the other lane. Its ucodes (c_init, c_step(kind, …), c_print) are each
// test's own: what a step does besides computing (spin, lag, throw, exit) is what the test asks.

/** The program: `luna run … p.fa STEPS KIND`. */
export const PROGRAM = `import c_init(int \`x, name \`v) as init;
import c_step(string \`kind, int \`t, int \`x, value \`a, value \`b, name \`v) as step;
import c_print(int \`x, value \`v) as print;
sub main(int steps, string kind)
{
    df v;
    for x = 0..1 init(x, v[0][x]);
    for t = 1..steps {
        cf a[t]: step(kind, t, 0, v[t-1][0], v[t-1][1], v[t][0]);
        cf b[t]: step(kind, t, 1, v[t-1][0], v[t-1][1], v[t][1]);
    }
    for x = 0..1 print(x, v[steps][x]);
}
`;

/** What the program prints, computed here. */
export function expected(steps: number): string[] {
  let v = [1, 2];
  for (let t = 1; t <= steps; t++) v = [0, 1].map((x) => (3 * v[0]! + 5 * v[1]! + t + x) % 1000003);
  return v.map((y, x) => `v[${x}] = ${y}`);
}
