// Every collective with every synchronisation mode: each rank checks its result.
import {
  MYTHREAD, THREADS, allAlloc, barrier, broadcast, scatter, gather, gatherAll, exchange, permute, reduce, prefixReduce,
  IN_NOSYNC, IN_MYSYNC, IN_ALLSYNC, OUT_NOSYNC, OUT_MYSYNC, OUT_ALLSYNC,
} from 'luna-ts/spmd';

function expect(what: string, got: number, want: number): void {
  if (got !== want) throw new Error(`rank ${MYTHREAD}: ${what}: got ${got}, want ${want}`);
}

const MODES = [
  IN_ALLSYNC | OUT_ALLSYNC, IN_MYSYNC | OUT_MYSYNC, IN_MYSYNC | OUT_ALLSYNC, IN_ALLSYNC | OUT_MYSYNC, IN_NOSYNC | OUT_ALLSYNC, IN_ALLSYNC | OUT_NOSYNC,
];

export default function main(): void {
  const T = THREADS, n = 3;
  const root = T - 1;
  for (const [m, mode] of MODES.entries()) {
    const tag = `mode ${m}`;
    // NOSYNC on entry: the program makes the data ready itself (the barrier below)
    const src = allAlloc(n * T * T, { block: n * T });
    for (let j = 0; j < src.local.length; j++) src.local[j] = 1000 * MYTHREAD + j + m;
    const dst = allAlloc(n * T * T, { block: n * T });
    barrier();
    // broadcast from the root's part
    broadcast(dst, src, n, src.layout.globalIndex(root, 0), mode);
    for (let j = 0; j < n; j++) expect(`${tag} broadcast[${j}]`, dst.local[j]!, 1000 * root + j + m);
    barrier();
    scatter(dst, src, n, src.layout.globalIndex(root, 0), mode);
    for (let j = 0; j < n; j++) expect(`${tag} scatter[${j}]`, dst.local[j]!, 1000 * root + MYTHREAD * n + j + m);
    barrier();
    gather(dst, src, n, dst.layout.globalIndex(root, 0), mode);
    barrier();
    if (MYTHREAD === root) for (let t = 0; t < T; t++) for (let j = 0; j < n; j++) expect(`${tag} gather[${t}][${j}]`, dst.local[t * n + j]!, 1000 * t + j + m);
    barrier();
    gatherAll(dst, src, n, mode);
    for (let t = 0; t < T; t++) for (let j = 0; j < n; j++) expect(`${tag} gatherAll[${t}][${j}]`, dst.local[t * n + j]!, 1000 * t + j + m);
    barrier();
    exchange(dst, src, n, mode);
    for (let t = 0; t < T; t++) for (let j = 0; j < n; j++) expect(`${tag} exchange[${t}][${j}]`, dst.local[t * n + j]!, 1000 * t + MYTHREAD * n + j + m);
    barrier();
    const perm = allAlloc(T, { type: 'i32' });
    perm.put(MYTHREAD, (MYTHREAD + 1) % T);
    barrier();
    permute(dst, src, perm, n, mode);
    barrier();
    const from = (MYTHREAD + T - 1) % T;
    for (let j = 0; j < n; j++) expect(`${tag} permute[${j}]`, dst.local[j]!, 1000 * from + j + m);
    // reduce over a range across every rank, into an element of the root
    const vals = allAlloc(7 * T + 1, { block: 2 });
    for (let j = 0; j < vals.local.length; j++) vals.local[j] = vals.layout.globalIndex(MYTHREAD, j) + m;
    const out = allAlloc(T);
    barrier();
    reduce(out, root, vals, 1, 7 * T - 1, 'sum', mode);
    barrier();
    let want = 0;
    for (let i = 1; i < 7 * T; i++) want += i + m;
    expect(`${tag} reduce`, out.get(root), want);
    reduce(out, 0, vals, 0, 7 * T + 1, 'max', mode);
    barrier();
    expect(`${tag} reduce max`, out.get(0), 7 * T + m);
    const pre = allAlloc(7 * T + 1, { block: 2 });
    prefixReduce(pre, vals, 7 * T + 1, 'sum', mode);
    barrier();
    let acc = 0;
    for (let i = 0; i < 7 * T + 1; i++) { acc += i + m; expect(`${tag} prefixReduce[${i}]`, pre.get(i), acc); }
    barrier();
  }
}
