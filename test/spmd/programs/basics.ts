// Shared arrays, put/get, memput/memget/memcpy, barriers (also split-phase) and locks: every
// rank checks what it reads and throws on a wrong value (the run then fails naming it).
import {
  MYTHREAD, THREADS, allAlloc, barrier, notify, wait, allLockAlloc, lock, unlock, attempt, memget, memput, memcpy,
} from 'luna-ts/spmd';

function expect(what: string, got: number, want: number): void {
  if (got !== want) throw new Error(`rank ${MYTHREAD}: ${what}: got ${got}, want ${want}`);
}

export default function main(): void {
  const N = 10 * THREADS + 3;
  const a = allAlloc(N, { block: 3, type: 'i32' });
  // each rank writes the elements with affinity to it through its local view
  for (let j = 0; j < a.local.length; j++) a.local[j] = a.layout.globalIndex(MYTHREAD, j) * 2;
  barrier();
  // every rank reads every element, local or not
  for (let i = 0; i < N; i++) expect(`a[${i}]`, a.get(i), 2 * i);
  const buf = new Int32Array(N);
  memget(buf, a, 0);
  for (let i = 0; i < N; i++) expect(`memget a[${i}]`, buf[i]!, 2 * i);
  barrier();
  // rank r writes elements r, r+T, … of b (cyclic: some on other ranks) with put
  const b = allAlloc(N, { block: 2 });
  for (let i = (MYTHREAD + 1) % THREADS; i < N; i += THREADS) b.put(i, i + 0.5);
  notify();
  // split phase: local work between notify and wait
  let s = 0;
  for (let i = 0; i < 1000; i++) s += i;
  expect('local work', s, 499500);
  wait();
  for (let i = 0; i < N; i++) expect(`b[${i}]`, b.get(i), i + 0.5);
  barrier();
  // memput a contiguous range that spans several ranks, memcpy shared to shared
  if (MYTHREAD === THREADS - 1) memput(b, 1, Float64Array.from({ length: N - 2 }, (_, i) => -i));
  barrier();
  for (let i = 1; i < N - 1; i++) expect(`memput b[${i}]`, b.get(i), -(i - 1));
  const c = allAlloc(N, { block: 5 });
  if (MYTHREAD === 0) memcpy(c, 0, b, 0, N);
  barrier();
  for (let i = 0; i < N; i++) expect(`memcpy c[${i}]`, c.get(i), b.get(i));
  // getFrom / putTo: a rank's own elements, OpenSHMEM style
  const own = new Float64Array(2);
  c.getFrom(own, (MYTHREAD + 1) % THREADS, 0);
  expect('getFrom', own[0]!, c.get(c.layout.globalIndex((MYTHREAD + 1) % THREADS, 0)));
  barrier();
  // a counter under a lock: every increment counts
  const counter = allAlloc(1, { type: 'i32' });
  const l = allLockAlloc();
  for (let i = 0; i < 50; i++) {
    lock(l);
    counter.put(0, counter.get(0) + 1);
    unlock(l);
  }
  barrier();
  expect('counter', counter.get(0), 50 * THREADS);
  // attempt: only one rank gets a lock held by rank 0 until everyone has tried
  const held = allLockAlloc();
  const got = allAlloc(THREADS, { type: 'i32' });
  if (MYTHREAD === 0) lock(held);
  barrier();
  if (MYTHREAD !== 0) got.put(MYTHREAD, attempt(held) ? 1 : 0);
  barrier();
  if (MYTHREAD === 0) unlock(held);
  for (let t = 1; t < THREADS; t++) expect(`attempt by ${t}`, got.get(t), 0);
  barrier();
}
