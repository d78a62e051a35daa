// Wait inside a collective: the root, rank 0, may leave an OUT_MYSYNC broadcast only once every rank
// has read its data; rank 3 comes `delay` ms after the others have read and left, so the root is
// alone in the operation meanwhile.
import { IN_MYSYNC, MYTHREAD, OUT_MYSYNC, allAlloc, broadcast } from 'luna-ts/spmd';
import { idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const src = allAlloc(64, { block: 16 }), dst = allAlloc(64, { block: 16 });
  const line = startLine();
  idleUntil(line + delay.on(MYTHREAD === 3));
  broadcast(dst, src, 16, 0, IN_MYSYNC | OUT_MYSYNC); // site
  siteLateness();
}
