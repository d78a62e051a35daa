// Rank 0 reads and writes rank 1's part from another node: argv[0] single gets, one memget of
// argv[1] f64 elements (streamed in chunks), argv[0] puts; every value checked.
import { MYTHREAD, THREADS, allAlloc, barrier } from 'luna-ts/spmd';

export default function main(args: string[]): void {
  const k = Number(args[0]), n = Number(args[1]);
  if (THREADS !== 2) throw new Error('2 ranks');
  const a = allAlloc(2 * k, { block: k, type: 'f64' });
  const big = allAlloc(2 * n, { block: n, type: 'f64' });
  if (MYTHREAD === 1) {
    for (let j = 0; j < k; j++) a.local[j] = 3 * j + 1;
    for (let j = 0; j < n; j++) big.local[j] = j * 0.25 - 7;
  }
  barrier();
  if (MYTHREAD === 0) {
    for (let i = 0; i < k; i++) if (a.get(k + i) !== 3 * i + 1) throw new Error(`get ${k + i}: got ${a.get(k + i)}`);
    const buf = new Float64Array(n);
    big.memget(buf, n);
    for (let j = 0; j < n; j++) if (buf[j] !== j * 0.25 - 7) throw new Error(`memget element ${j}: got ${buf[j]}, want ${j * 0.25 - 7}`);
    for (let i = 0; i < k; i++) a.put(k + i, -i);
  }
  barrier();
  if (MYTHREAD === 1) for (let j = 0; j < k; j++) if (a.local[j] !== -j) throw new Error(`put ${k + j}: got ${a.local[j]}, want ${-j}`);
  barrier();
}
