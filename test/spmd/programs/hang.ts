// Rank 1 returns without reaching the barrier the others wait at.
import { MYTHREAD, barrier } from 'luna-ts/spmd';

export default function main(): void {
  if (MYTHREAD === 1) return;
  barrier();
}
