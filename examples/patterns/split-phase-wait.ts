// Wait at a split-phase barrier: rank 2 notifies `delay` ms after the others, who then wait for it
// in their wait (the notify itself never waits).
import { MYTHREAD, notify, wait } from 'luna-ts/spmd';
import { idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const line = startLine();
  idleUntil(line + delay.on(MYTHREAD === 2));
  notify();
  idleUntil(line + 1); // local work between the halves
  wait(); // site
  siteLateness();
}
