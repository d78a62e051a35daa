// Wait in collective allocation: rank 0, which allocates, reaches allAlloc `delay` ms after the
// others, who wait for it.
import { MYTHREAD, allAlloc } from 'luna-ts/spmd';
import { idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const line = startLine();
  idleUntil(line + delay.on(MYTHREAD === 0));
  const a = allAlloc(1024); // site
  a.local.fill(MYTHREAD);
  siteLateness();
}
