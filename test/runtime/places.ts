// A program for placement by a distribution (test/runtime/distribution.test.ts in process,
// test/cli/balance.test.ts under mpirun): w[i] would run on i (its locator), a file may put it
// elsewhere with its DF t; r[i] reads t where its own locator says; s[i] are stealable.
export const PLACES = `import c_put(int \`i, name \`t) as put;
import c_show(int \`i, value \`t) as show;
import c_busy(int \`i, int \`ms) as busy;

sub main(int n, int ms)
{
    for i = 0..n-1 {
        df t;
        cf w[i]: put(i, t) @ { locator_cyclic: i; };
        cf r[i]: show(i, t) @ { locator_cyclic: i + 1; };
    }
    for i = 0..n-1
        cf s[i]: busy(i, ms) @ { stealable; };
}
`;
