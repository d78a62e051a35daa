// argv[0] barriers, then as many split-phase notify/wait pairs with local work between.
import { barrier, notify, wait } from 'luna-ts/spmd';

export default function main(args: string[]): void {
  const n = Number(args[0]);
  for (let i = 0; i < n; i++) barrier();
  let x = 0;
  for (let i = 0; i < n; i++) {
    notify();
    for (let j = 0; j < 1000; j++) x += j;
    wait();
  }
  if (x !== n * 499500) throw new Error('local work lost');
}
