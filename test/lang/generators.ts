// Generators of hostile LuNA sources: deep nesting, flat chains of any length, big macros.
// Every program calls `show(int)` / `v(value)`; `k` is an int parameter of main (1 when run).

export const HEADER = 'import c_show(int) as show;\nimport c_v(value) as v;\nimport c_o(name) as o;\n';

const rep = (s: string, n: number): string => s.repeat(n);

export interface DeepShape {
  /** source of `main` with the construct nested n times */
  make(n: number): string;
  /** nesting levels each repetition costs (as the parser counts them) */
  levels: number;
  /** the text that opens one repetition (the nesting diagnostic comes after about MAX/levels of them) */
  opener: string;
  /** the value of the shown expression with k = 1, when it is simple to state */
  value?(n: number): number;
}

/** One shape per kind of nesting the parser counts. */
export const DEEP: Record<string, DeepShape> = {
  parens: { make: (n) => `sub main(int k) show(${rep('(', n)}k${rep(')', n)});`, levels: 1, opener: '(', value: () => 1 },
  casts: { make: (n) => `sub main(int k) show(${rep('int(', n)}k${rep(')', n)});`, levels: 1, opener: 'int(', value: () => 1 },
  rightSums: { make: (n) => `sub main(int k) show(${rep('k+(', n)}k${rep(')', n)});`, levels: 2, opener: 'k+(', value: (n) => n + 1 },
  negations: { make: (n) => `sub main(int k) show(${rep('-(', n)}k${rep(')', n)});`, levels: 2, opener: '-(', value: (n) => (n % 2 ? -1 : 1) },
  thenBranches: { make: (n) => `sub main(int k) show(${rep('k ? ', n)}k${rep(' : 0', n)});`, levels: 1, opener: 'k ? ', value: () => 1 },
  precedence: { make: (n) => `sub main(int k) show(${rep('k || k && k == k + k * -(', n)}k${rep(')', n)});`, levels: 7, opener: 'k || ' },
  indices: { make: (n) => `sub main(int k) { df a; v(${rep('a[', n)}0${rep(']', n)}); }`, levels: 1, opener: 'a[' },
  ifs: { make: (n) => `sub main(int k) {\n${rep('if k {\n', n)}show(k);\n${rep('}\n', n)}}`, levels: 1, opener: 'if k' },
  fors: { make: (n) => `sub main(int k) {\n${rep('for i = 0..k {\n', n)}show(k);\n${rep('}\n', n)}}`, levels: 1, opener: 'for i' },
  whiles: {
    make: (n) => `sub main(int k) {\ndf w;\n${Array.from({ length: n }, (_, i) => `while i${i} < 1, i${i} = 0..out w[${i}] {\n`).join('')}show(k);\n${rep('}\n', n)}}`,
    levels: 1, opener: 'while',
  },
  lets: { make: (n) => `sub main(int k) {\n${Array.from({ length: n }, (_, i) => `let a${i} = k + ${i} {\n`).join('')}show(k);\n${rep('}\n', n)}}`, levels: 1, opener: 'let' },
};

/** Flat chains of one level: they must work at any length. */
export const FLAT: Record<string, { make(n: number): string; value?(n: number): number }> = {
  sum: { make: (n) => `sub main(int k) show(k${rep(' + k', n - 1)});`, value: (n) => n },
  mixed: { make: (n) => `sub main(int k) show(k${rep(' - k * 2 + k % 3', n)});`, value: (n) => 1 - n },
  minuses: { make: (n) => `sub main(int k) show(${rep('- ', n)}k);`, value: (n) => (n % 2 ? -1 : 1) },
  comparisons: { make: (n) => `sub main(int k) show(k${rep(' < 2', n)});`, value: () => 1 },
  conditions: { make: (n) => `sub main(int k) show(k${rep(' ? 1 : 0', n)});`, value: () => 1 },
  logic: { make: (n) => `sub main(int k) show(k${rep(' && k || 0', n)});`, value: () => 1 },
  arguments: { make: (n) => `import c_many(${rep('int, ', n - 1)}int) as many;\nsub main(int k) many(${rep('k, ', n - 1)}k);` },
  indexList: { make: (n) => `sub main(int k) { df a; v(a${rep('[k]', n)}); }` },
  setdfs: { make: (n) => `sub main(int k) { df a; show(k) >> (${Array.from({ length: n }, (_, i) => `a[${i}]`).join(', ')}); }` },
  statements: { make: (n) => `sub main(int k) {\n${rep('show(k);\n', n)}}` },
  dfs: { make: (n) => `sub main(int k) {\ndf ${Array.from({ length: n }, (_, i) => `d${i}`).join(', ')};\no(d0);\n}` },
  letBindings: { make: (n) => `sub main(int k) let ${Array.from({ length: n }, (_, i) => `a${i} = ${i ? `a${i - 1} + 1` : 'k'}`).join(', ')} show(a${n - 1});`, value: (n) => n },
  requests: { make: (n) => `sub main(int k) { df a; v(a[0]) @ { request ${Array.from({ length: n }, (_, i) => `a[${i}]`).join(', ')}; }; }` },
  subs: { make: (n) => `${Array.from({ length: n }, (_, i) => `sub s${i}(int k) show(k);`).join('\n')}\nsub main(int k) s0(k);` },
};

/** `#define A0 unit`, each next level doubling: the expansion of A_levels has 2^levels units. */
export function doublingChain(levels: number, unit = 'x '): string {
  let src = `#define A0 ${unit}\n`;
  for (let i = 1; i <= levels; i++) src += `#define A${i} $A${i - 1}$A${i - 1}\n`;
  return `${src}sub main() show($A${levels});\n`;
}

/** A macro whose body is a sum of n ones, used once. */
export function bigMacroBody(n: number): string {
  return `#define BIG 1${rep('+1', n - 1)}\nsub main(int k) show($BIG);\n`;
}

/** A macro argument that is a sum of n ones. */
export function bigMacroArgument(n: number): string {
  return `#define ID(x) ($x)\nsub main(int k) show($ID(1${rep('+1', n - 1)}));\n`;
}

/** n uses of a macro in one expression. */
export function manyMacroUses(n: number): string {
  return `#define ONE (k)\nsub main(int k) show($ONE${rep(' + $ONE', n - 1)});\n`;
}

/** `$F($F(…$F(k)…))`, n deep. */
export function nestedMacroCalls(n: number): string {
  return `#define F(x) ($x + 1)\nsub main(int k) show(${rep('$F(', n)}k${rep(')', n)});\n`;
}

/** One line of `width` characters holding `errors` invalid symbols. */
export function errorLine(errors: number, width: number): string {
  const body = rep('! ', errors);
  return `sub main(int k) show(k ${body}${rep(' ', Math.max(0, width - body.length - 30))});\n`;
}

/** Deterministic PRNG (mulberry32) for generated inputs. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
