// Wait at barrier: rank 3 computes `delay` ms longer than the others before a barrier.
import { MYTHREAD, barrier } from 'luna-ts/spmd';
import { idleUntil, injection, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const line = startLine();
  idleUntil(line + delay.on(MYTHREAD === 3));
  barrier(); // site
}
