// The scheduling group of the programs a benchmark times. Each timed command runs in a session of
// its own (`detached`, so that a timeout kills it and every process it started), and under Linux's
// autogroup scheduling a new session is a new group at nice 0, whatever the benchmark's own: a
// bench started shielded (`setsid bash -c 'echo -19 > /proc/self/autogroup; exec nice -n -19
// npm run bench'`) timed its children unshielded, at the other tenants' mercy (the PIC's
// 2 nodes × 1 thread read 1.07–1.58 of 1 × 1 plus the transfer in the bench, 0.90–0.93 shielded
// by hand, docs/pic.md). Each child's group now takes the benchmark's group's nice.
import { readFileSync, writeFileSync } from 'node:fs';

const AUTOGROUP = /nice\s+(-?\d+)/;

/** The nice of this process's autogroup, or undefined where there is none (not Linux, autogroup off, or a task of the default group, whose file is empty). */
export function groupNice(file = '/proc/self/autogroup'): number | undefined {
  try {
    const m = AUTOGROUP.exec(readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch { return undefined; }
}

const own = groupNice();

/**
 * Give the session of child `pid` (spawned `detached`) this benchmark's group nice. A no-op at
 * nice 0 or where there is no autogroup; where the kernel refuses (a nice below 0 needs
 * CAP_SYS_NICE) the child is timed in a group at nice 0, as before.
 */
export function followGroup(pid: number | undefined): void {
  if (pid === undefined || own === undefined || own === 0) return;
  try { writeFileSync(`/proc/${pid}/autogroup`, String(own)); } catch { /* refused: timed at the group's default */ }
}

/** One line for the benchmark's header: how its children are scheduled. */
export function schedLine(): string {
  if (own === undefined) return 'scheduling: no autogroup for this process (none on this kernel, or the session of a container\'s init); children run at the benchmark\'s nice';
  return own === 0
    ? `scheduling: autogroup nice 0 (shield a run on a shared machine: setsid bash -c 'echo -19 > /proc/self/autogroup; exec nice -n -19 npm run bench')`
    : `scheduling: autogroup nice ${own}, and each timed command's group follows it`;
}
