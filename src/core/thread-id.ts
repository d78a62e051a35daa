// The calling thread's id as the kernel knows it: what a nice value, an affinity or a liveness
// check names a single thread by (Linux; Node has no call for it).
import { readlinkSync } from 'node:fs';

/** The calling thread's kernel id (/proc/thread-self); undefined where there is none (not Linux). */
export function osThreadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}
