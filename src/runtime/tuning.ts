// The numeric settings a run takes from its environment, declared once: `luna run` checks every
// one before anything starts (a malformed value is an error naming the variable and what it
// takes, exit 2), and the runtime reads them through `tuned`, so no reader falls back silently
// to its default on a typo. Most exist to compare a measured default against other values.

interface Setting {
  /** what a value sets, for the error message */
  what: string;
  min: number;
  max?: number;
  /** whole numbers only */
  integer?: boolean;
}

export const TUNING = {
  LUNA_SPIN_US: { what: 'how long a worker with nothing to do spins before it sleeps, µs (0: sleep at once)', min: 0 },
  LUNA_FED_SPIN_US: { what: 'how long a worker spins for a value fed by another lane, µs (0: sleep at once)', min: 0 },
  LUNA_FED_SPIN_PRODUCER_US: { what: 'how long a worker spins for a fed value while its producer runs, µs', min: 0 },
  LUNA_FED_STARVED_US: { what: 'how long a worker spins for a fed value while the lane that makes it waits for a core, µs (0: it never stops for that)', min: 0 },
  LUNA_RESULT_SPIN_US: { what: 'how long the system thread spins for a worker\'s result, µs (0: sleep at once)', min: 0 },
  LUNA_RUN_LOW_US: { what: 'the work left in a worker\'s batch at which it asks the system thread for the next one, µs (0: it asks only with its result)', min: 0 },
  LUNA_FED_RUN_MS: { what: 'the work of a fed batch, ms', min: Number.MIN_VALUE },
  LUNA_FED_FIRST_US: { what: 'the work at which a fed batch for a lane with less than that in flight is sent, the rest following in its next batch, µs (0: never cut)', min: 0 },
  LUNA_FED_BATCH_MB: { what: 'raw output megabytes at which a fed batch closes', min: 1 },
  LUNA_WAIT_AHEAD_PER_CF: { what: 'how many CFs a loop keeps waiting ahead per CF ready or running while workers run batches on one node', min: 0 },
  LUNA_WAIT_AHEAD_PER_BATCH: { what: 'how many CFs a loop keeps waiting ahead at most per batch in flight while workers run batches on one node', min: 0 },
  LUNA_CHAIN_AHEAD_MS: { what: 'the work a chain keeps queued on its lane, ms (0: one batch)', min: 0 },
  LUNA_PRIORITY_BATCH_US: { what: 'under an order of priorities, the work of a batch of one short code\'s ready fragments, µs (0: one fragment a batch)', min: 0 },
  LUNA_BOARD_AHEAD: { what: 'under an order of priorities, the ready fragments posted ahead on the node\'s ready board while no lane is idle, which the first lane to end its batch takes itself (0: none, every batch goes to an idle lane)', min: 0, max: 32, integer: true },
  LUNA_START_GC: { what: 'whether the young generation is collected once before a program\'s first fragment, where bin/luna handed the collector over (1, the default; 0: it is not)', min: 0, max: 1, integer: true },
  LUNA_LOOP_PLANS: { what: 'whether a node without peers plans its loops of ucode calls whole and feeds their steps to its worker lanes, or runs them on its system thread where their fragments would run inline, without a fragment a step (1, the default; 0: every loop is unrolled)', min: 0, max: 1, integer: true },
  LUNA_LOOP_RANGES: { what: 'whether a planned loop\'s windows go to its worker lanes as ranges of steps the workers build from the plan, sent once a loop (1, the default), or as tasks built on the system thread (0, for comparisons)', min: 0, max: 1, integer: true },
  LUNA_NATIVE_STEPS: { what: 'whether a loop planned on the system thread whose ucodes are all C++ with int and real values is stepped by the C++ addon, many steps a call (1, the default), or step by step from JavaScript (0, for comparisons)', min: 0, max: 1, integer: true },
  LUNA_SYSTEM_LANE: { what: 'whether the system thread of a node without peers is one of its lanes (0: every lane is a worker thread)', min: 0, max: 1, integer: true },
  LUNA_RING: { what: 'whether nodes of one machine pass messages through shared-memory rings beside their sockets (0: sockets only)', min: 0, max: 1, integer: true },
  LUNA_RING_SPIN_US: { what: 'how long the system thread polls its rings after its last message, µs (0: only when a doorbell rings)', min: 0 },
  LUNA_LANE_REHEARSE_CFS: { what: 'how many fragments each worker rehearses with `--warm-start` before it reports ready (0: none)', min: 0, integer: true },
  LUNA_LANE_REHEARSE_MS: { what: 'how long the workers\' rehearsal with `--warm-start` may last at most, ms', min: 0 },
  LUNA_REHEARSE_CFS: { what: 'how many fragments `--warm-start` rehearses on the system thread while the workers boot (0: none)', min: 0, integer: true },
  LUNA_V8_NICE: { what: 'how far V8\'s background threads are lowered once lanes run fragments, or from the first fragment of a one-node program with a loop that begins with no worker started (0: not at all)', min: 0, max: 19, integer: true },
  LUNA_LANE_NICE: { what: 'how far a node of coarse fragments lowers its worker lanes\' priority below its system thread, in nice steps (0: not at all)', min: 0, max: 19, integer: true },
  LUNA_V8_NICE_START: { what: 'whether a one-node program with a loop, a while or a sub call that begins with no worker thread started lowers V8\'s background threads (by LUNA_V8_NICE) at its first fragment (0: only once lanes run)', min: 0, max: 1, integer: true },
  LUNA_PIN_LANES: { what: 'whether each worker lane is pinned to a CPU of its own where the node may use as many CPUs as it has worker lanes (0: not pinned)', min: 0, max: 1, integer: true },
  LUNA_SYSTEM_NICE: { what: 'how far the system thread is lowered while every worker lane has a batch in flight, where it may get its priority back (0: never)', min: 0, max: 19, integer: true },
  LUNA_WORKER_HEAP_MB: { what: 'a worker thread\'s heap limit, MB', min: 8, integer: true },
  LUNA_COLLECT_SHARED_MB: { what: 'the shared memory the system thread drops between the full collections it forces (a worker forces a minor one for each eighth of it that it makes), MB', min: 1, integer: true },
  LUNA_RECYCLE_MB: { what: 'the freed raw DF buffers each thread keeps to reuse for new outputs of their size, MB (0: none is reused)', min: 0, integer: true },
  LUNA_RECYCLE_LARGER: { what: 'how many times its length a pooled buffer of a larger size class an output may take when the pool holds none of its own class (1: its own class only)', min: 1 },
  LUNA_RECYCLE_POISON: { what: 'a check of recycling: 1 fills each buffer with 0xFF bytes (NaN as doubles) as it enters a pool, so a reader it was taken from too early reads poison (0: off)', min: 0, max: 1, integer: true },
  LUNA_KEEP_FREED_MB: { what: 'the freed memory a node keeps for its next large buffers, MB (0: the C library\'s own policy)', min: 0, integer: true },
} as const satisfies Record<string, Setting>;

export type TuningName = keyof typeof TUNING;

/** The value of `name` in `env`, undefined when unset or malformed (`tuningErrors` reports those). */
export function tuned(name: TuningName, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env[name];
  if (v === undefined || v.trim() === '') return undefined;
  const s: Setting = TUNING[name];
  const n = Number(v);
  if (!Number.isFinite(n) || n < s.min || (s.max !== undefined && n > s.max) || (s.integer === true && !Number.isInteger(n))) return undefined;
  return n;
}

/** One message per malformed setting in `env`. */
export function tuningErrors(env: NodeJS.ProcessEnv = process.env): string[] {
  const errors: string[] = [];
  for (const name of Object.keys(TUNING) as TuningName[]) {
    const v = env[name];
    if (v === undefined || v.trim() === '' || tuned(name, env) !== undefined) continue;
    const s: Setting = TUNING[name];
    const range = s.max !== undefined ? `from ${s.min} to ${s.max}` : s.min === Number.MIN_VALUE ? 'above 0' : `of at least ${s.min}`;
    errors.push(`${name} must be a ${s.integer === true ? 'whole number' : 'number'} ${range} (${s.what}), got ${JSON.stringify(v)}`);
  }
  return errors;
}
