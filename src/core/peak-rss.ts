// Peak resident memory of this process. On Linux getrusage's maxrss survives fork+exec: a child
// spawned by a large parent reports the parent's peak. VmHWM in /proc/self/status belongs to this
// process image only, so it is read first.
import { readFileSync } from 'node:fs';

/** Peak resident set size of this process, KiB. */
export function peakRssKB(): number {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]);
  } catch { /* not Linux */ }
  return process.resourceUsage().maxRSS;
}
