// A program both FIFO-start tests run (lanes-later.test.ts by the CLI, fifo-start.test.ts in
// process): its CFs run on the system thread and park almost none.

/** c independent chains of n tiny links, each chain's last value shown (c_start, c_step, c_show). */
export const CHAINS = `import c_start(name \`x) as start;
import c_step(value \`prev, name \`next) as step;
import c_show(int \`j, value \`last) as show;
sub chain(int j, int n, name x)
{
    cf first: start(x[0]);
    for i = 0..n-1
        cf link[i]: step(x[i], x[i + 1]);
    show(j, x[n]);
}
sub main(int c, int n)
{
    df x;
    for j = 0..c-1
        chain(j, n, x[j]);
}
`;
