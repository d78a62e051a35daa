// Synchronisation at entry to a collective: rank 2 enters an IN_ALLSYNC broadcast `delay` ms late,
// and every other rank waits for it before any data moves.
import { IN_ALLSYNC, MYTHREAD, OUT_NOSYNC, allAlloc, broadcast } from 'luna-ts/spmd';
import { idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const src = allAlloc(64, { block: 16 }), dst = allAlloc(64, { block: 16 });
  const line = startLine();
  idleUntil(line + delay.on(MYTHREAD === 2));
  broadcast(dst, src, 16, 0, IN_ALLSYNC | OUT_NOSYNC); // site
  siteLateness();
}
