// Atomic code fragments of examples/particles/particles.fa. A particle is 16 bytes: its id and
// a checksum (3 id + 1), both float64.
import type { DF } from '../../src/ucode/df.js';
import type { DdaBlock } from '../../src/ucode/dda.js';

const checksum = (id: number): number => 3 * id + 1;

/** n particles with ids 0..n-1 in this node's block. */
export function c_seed(P: DdaBlock, n: number, made: DF): void {
  if (P.getMaxNumel() - P.getNumel() < n) P.resize((P.getNumel() + n) * P.getElsize());
  const v = P.addElement(n)!;
  const f = new Float64Array(v.buffer, v.byteOffset, 2 * n);
  for (let i = 0; i < n; i++) { f[2 * i] = i; f[2 * i + 1] = checksum(i); }
  made.setInt(P.getNumel());
}

/** This node's share: ids divisible by 3 leave (removed at release), ids below n divisible by 5 get a child n + id. */
export function c_evolve(P: DdaBlock, spread: DF, n: number, kept: DF): void {
  const f = P.f64();
  const children: number[] = [];
  let leaving = 0;
  for (let i = 0; i < P.getNumel(); i++) {
    const id = f[2 * i]!;
    if (f[2 * i + 1] !== checksum(id)) throw new Error(`particle ${id} corrupted`);
    if (id % 3 === 0) { P.remElement(i); leaving++; }
    if (id < n && id % 5 === 0) children.push(n + id);
  }
  if (P.getMaxNumel() - P.getNumel() < children.length) P.resize((P.getNumel() + children.length) * P.getElsize());
  for (const id of children) P.addElement(new Float64Array([id, checksum(id)]));
  kept.setInt(P.getNumel() - leaving);
}

export function c_zero(z: DF): void { z.setInt(0); }

export function c_add(a: DF, b: DF, sum: DF): void { sum.setInt(a.getInt() + b.getInt()); }

/** All particles are back on node 0: exactly the expected ids, each once, with their checksums. */
export function c_check(P: DdaBlock, spread: DF, count: DF, kept: DF, back: DF, n: number, nodes: number): void {
  const want = new Set<number>();
  for (let id = 0; id < n; id++) {
    if (id % 3 !== 0) want.add(id);
    if (id % 5 === 0) want.add(n + id);
  }
  const f = P.f64();
  const seen = new Set<number>();
  const problems: string[] = [];
  for (let i = 0; i < P.getNumel(); i++) {
    const id = f[2 * i]!;
    if (f[2 * i + 1] !== checksum(id)) problems.push(`particle ${id} corrupted`);
    else if (seen.has(id)) problems.push(`particle ${id} twice`);
    else if (!want.has(id)) problems.push(`particle ${id} should not exist`);
    seen.add(id);
  }
  for (const id of want) if (!seen.has(id)) problems.push(`particle ${id} lost`);
  const c = count.getInt();
  if (spread.getInt() !== n) problems.push(`the first rearrangement moved ${spread.getInt()} particles, not ${n}`);
  if (c !== want.size || kept.getInt() !== c || back.getInt() !== c) problems.push(`count ${c}, kept ${kept.getInt()}, gathered ${back.getInt()}; expected ${want.size}`);
  if (problems.length > 0) {
    console.log(`particles: FAILED (${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; … ${problems.length} problems` : ''})`);
    throw new Error('particles: result mismatch');
  }
  console.log(`particles: OK (n=${n}, ${nodes} node(s), ${c} particles)`);
}
