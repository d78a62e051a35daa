// Wait at barrier: rank 3 reaches a barrier `delay` ms after the others (busy elsewhere meanwhile).
import { MYTHREAD, barrier } from 'luna-ts/spmd';
import { idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const line = startLine();
  idleUntil(line + delay.on(MYTHREAD === 3));
  barrier(); // site
  siteLateness();
}
