// Rank 1 returns without entering the broadcast the others wait in.
import { MYTHREAD, allAlloc, broadcast } from 'luna-ts/spmd';

export default function main(): void {
  const a = allAlloc(16);
  if (MYTHREAD === 1) return;
  broadcast(a, a, 1);
}
