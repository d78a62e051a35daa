// Barrier completion: rank 2 is held `delay` ms after a barrier completed (as a rank descheduled
// then is), so the others leave it that much earlier.
import { MYTHREAD, barrier, holdNextExit } from 'luna-ts/spmd';
import { idleUntil, injection, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const line = startLine();
  holdNextExit(delay.on(MYTHREAD === 2));
  idleUntil(line);
  barrier(); // site
}
