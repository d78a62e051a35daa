// Barrier completion: rank 2 is held `delay` ms longer than the others after a barrier completed
// (as a rank descheduled then is), so the others leave it that much earlier; every rank leaves at a
// common instant after the completion, rank 2 `delay` later.
import { MYTHREAD, barrier, holdNextExit } from 'luna-ts/spmd';
import { exitLine, idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const line = startLine();
  holdNextExit(delay.on(MYTHREAD === 2), exitLine(line)); // every rank leaves at the same instant, the held one `delay` later
  idleUntil(line);
  barrier(); // site
  siteLateness();
}
