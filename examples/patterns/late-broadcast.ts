// Late broadcast: the root, rank 1, enters an IN_MYSYNC broadcast `delay` ms after the others, who
// wait for its data.
import { IN_MYSYNC, MYTHREAD, OUT_NOSYNC, allAlloc, broadcast } from 'luna-ts/spmd';
import { idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const src = allAlloc(64, { block: 1 }), dst = allAlloc(64, { block: 1 });
  const line = startLine();
  idleUntil(line + delay.on(MYTHREAD === 1));
  broadcast(dst, src, 1, 1, IN_MYSYNC | OUT_NOSYNC); // site (src[1] is rank 1's)
  siteLateness();
}
