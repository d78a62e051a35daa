// What the validation programs share: the delay to inject (the program's arguments: the delay in
// ms, and `balanced` for the clean variant, where every rank takes it), a start line common to every rank, and a rank that
// is busy elsewhere until an instant (asleep: a sleeping thread takes no core from the others and
// is woken on time even when the machine is loaded, where a spinning one is pre-empted for ms).
import { MYTHREAD, allAlloc, barrier, exitLateness } from 'luna-ts/spmd';

export interface Injection {
  /** the delay, ms */
  ms: number;
  /** every rank takes the delay (the same program, balanced: nothing to find) */
  balanced: boolean;
  /** the delay of a rank, injected there or not */
  on(injected: boolean): number;
}

/** `prog.ts [delay-ms] [balanced]`: the delay injected into one rank (default 100 ms), or into every rank */
export function injection(args: string[]): Injection {
  const ms = Number(args[0] ?? 100);
  if (!(Number.isFinite(ms) && ms >= 0)) throw new Error(`bad delay '${args[0]}': milliseconds ≥ 0`);
  if (args[1] !== undefined && args[1] !== 'balanced') throw new Error(`bad mode '${args[1]}': 'balanced' or nothing`);
  const balanced = args[1] === 'balanced';
  return { ms, balanced, on: (injected) => (injected || balanced ? ms : 0) };
}

/** the machine's wall clock in ms (the same in every thread and process of the machine) */
export const wall = (): number => performance.timeOrigin + performance.now();

/** common instants the start line samples before it picks the line, and how far apart */
const SAMPLES = 16, SAMPLE_EVERY_MS = 8;

/**
 * An instant `leadMs` ahead, the same on every rank: rank 0 picks it and a barrier publishes it.
 * Ranks leave a barrier as each is woken (ms apart on a loaded machine); computing up to a common
 * instant instead of for a common time (and sleeping until it) makes the injected delay the only
 * difference.
 *
 * First every rank sleeps until SAMPLES common instants, each followed by a barrier — the clean
 * case of what the programs measure — and prints the latest it woke after one (`wake lateness:
 * rank R L ms`). That is the scheduling noise of this very run: the validation holds the clean run
 * to it, and to what the engine charges at these calibration barriers. The line is picked after
 * them, at least `leadMs` ahead and four times the slowest of them (and the latest wake) ahead,
 * so however slow the machine is, every rank reaches it in time.
 */
export function startLine(leadMs = 100): number {
  const at = allAlloc(1);
  if (MYTHREAD === 0) at.local[0] = wall() + 20;
  barrier();
  const from = at.get(0);
  let late = 0, woke = 0, slowest = 0;
  for (let k = 0; k < SAMPLES; k++) {
    const t = from + k * SAMPLE_EVERY_MS;
    if (t > wall()) {
      idleUntil(t);
      late = Math.max(late, wall() - t);
      woke++;
    }
    const b = wall();
    barrier(); // calibration
    slowest = Math.max(slowest, wall() - b);
  }
  console.log(`wake lateness: rank ${MYTHREAD} ${late.toFixed(3)} ms over ${woke} wakes`);
  // the line far enough ahead that publishing it (a barrier and, on other nodes, a get) reaches
  // every rank before it even as slow as the calibration went (at a load of 25 on 2 cores a
  // barrier took 60 ms)
  if (MYTHREAD === 0) at.local[0] = wall() + Math.max(leadMs, 4 * (slowest + late));
  barrier();
  pastStartLine = true;
  return at.get(0);
}

/**
 * Ms after the start line by which a synchronising operation begun there has completed on every
 * rank, even on a loaded machine (ranks are woken ms apart there; 74 ms seen at a load of 20 on 2
 * cores). Holds measured from it (`holdNextExit(ms, exitLine(line))`) release ranks together
 * however far apart the operation's completion woke them, so a held rank's delay is the only skew
 * of the exits.
 */
export const SETTLE_MS = 250;
export const exitLine = (line: number): number => line + SETTLE_MS;

const nap = new Int32Array(new SharedArrayBuffer(4));

/** the latest a timed wake came after the start line, ms (siteLateness prints it) */
let siteLate = 0;
let pastStartLine = false;

/** be busy elsewhere until the wall clock reaches `t` (ms, as startLine's) */
export function idleUntil(t: number): void {
  if (t <= wall()) return;
  for (let left = t - wall(); left > 0; left = t - wall()) Atomics.wait(nap, 0, 0, left);
  if (pastStartLine) siteLate = Math.max(siteLate, wall() - t);
}

/**
 * After the measured operation: print the latest this rank woke after an instant it slept until
 * past the start line, or left a held exit after its instant (`site lateness: rank R L ms`). On a loaded machine a rank woken late
 * reaches the operation late, and what the ranks waited there differs from the injected delay by
 * up to that: the validation allows it.
 */
export function siteLateness(): void {
  console.log(`site lateness: rank ${MYTHREAD} ${Math.max(siteLate, exitLateness()).toFixed(3)} ms`);
}

/**
 * Wait (asleep, in naps of 0.2 ms) until `read()` — an element another rank puts — is no longer 0,
 * and return it: choreography by events, where an instant could be missed on a loaded machine.
 */
export function whenSet(read: () => number): number {
  for (let v = read(); ; v = read()) {
    if (v !== 0) return v;
    Atomics.wait(nap, 0, 0, 0.2);
  }
}
