// SPMD layer suite: barrier latency, 8-byte get/put latency and 1 MiB memget/memput bandwidth of
// `luna spmd` programs, on one node (2 ranks as worker threads) against raw shared memory (the
// same buffers with an Atomics barrier, plain reads and copies) measured in the same program,
// and across 2 node processes (1 rank each) against the raw transport between the same two
// ranks' threads — a round trip of a small message, a fetch of 1 MiB — measured by the same
// program in blocks alternated with the layer's gets and memgets. The barrier across processes
// meets in the machine's shared segment; the same program with LUNA_SPMD_SHM=0 gives the barrier
// through the sockets beside it (runs of the two alternated).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { rawSocketKind } from './raw-socket.js';
import { LUNA, LUNA_NODE_ENV, LUNA_NODE_FLAGS, median, prog, ROOT, section, sig, type Ctx, type SuiteOutput, type Target } from './common.js';

const TARGETS: Target[] = [
  { key: 'barrierUs1node', op: '<=', value: 10, label: 'barrier among the ranks of one process (µs)' },
  { key: 'barrierUs2procs', op: '<=', value: 50, label: 'barrier across 2 processes (µs)' },
  { key: 'getUs1node', op: '<=', value: 1, label: '8-byte get within a process (µs)' },
  { key: 'putUs1node', op: '<=', value: 1, label: '8-byte put within a process (µs)' },
  { key: 'memgetGBps1node', op: '>=', value: 5, label: '1 MiB memget within a process (GB/s)' },
  { key: 'getVsRawRtt2procs', op: '<=', value: 2, label: '8-byte get across processes vs the raw transport round trip' },
  { key: 'memgetVsRaw2procs', op: '<=', value: 2, label: '1 MiB memget across processes vs a raw 1 MiB fetch (request, MiB back)' },
];

/** Open MPI's OpenSHMEM barrier on one node of this machine (the figure), µs. */
const SHMEM_BARRIER_US = 0.48;

type Figures = Record<string, number>;

/** One run of the latency program on `nodes` node processes (2 ranks in all). */
function measureOnce(dir: string, nodes: number, iters: number, tag: string, env: Record<string, string> = {}): Figures {
  const out = join(dir, `r${nodes}-${tag}.json`);
  const argv = ['spmd', '--threads', '2', ...(nodes > 1 ? ['--nodes', String(nodes)] : []), prog('spmd/latency.ts'), out, String(iters), nodes > 1 ? 'remote' : 'local'];
  const r = spawnSync(process.execPath, [...LUNA_NODE_FLAGS, LUNA, ...argv], { cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...LUNA_NODE_ENV, ...env } });
  if (r.status !== 0) throw new Error(`luna ${argv.join(' ')}: exit ${r.status ?? r.signal}: ${(r.stderr ?? '').trim().split('\n').slice(0, 6).join(' | ')}`);
  return JSON.parse(readFileSync(out, 'utf8')) as Figures;
}

async function measure(dir: string, nodes: number, iters: number, reps: number): Promise<Figures[]> {
  const runs: Figures[] = [];
  for (let i = 0; i < reps; i++) runs.push(measureOnce(dir, nodes, iters, String(i)));
  return runs;
}

const med = (runs: Figures[], k: string): number => median(runs.map((r) => r[k]!).filter((x) => x !== undefined));

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const q = ctx.quick;
  const reps = Math.max(1, q ? 1 : ctx.reps);
  const f: Figures = {};
  const units: Record<string, string> = {};
  const notes: string[] = [
    `median of ${reps} run(s) per configuration; 2 ranks; figures are rank 0's own timings inside the program`,
    '*SleepsPerOp: rank 0\'s sleeps per operation (waitStats): ~0 when the waits spin through, ~1 when each pays a wake-up',
  ];
  const dir = mkdtempSync(join(tmpdir(), 'luna-bench-spmd-'));
  try {
    await section(ctx, notes, 'one node', async () => {
      const one = await measure(dir, 1, q ? 500 : 5000, reps);
      f.barrierUs1node = sig(med(one, 'barrierUs'));
      f.barrierSleepsPerOp1node = sig(med(one, 'barrierSleepsPerOp'));
      f.rawBarrierUs1node = sig(med(one, 'rawBarrierUs'));
      f.barrierVsRaw1node = sig(f.barrierUs1node / f.rawBarrierUs1node);
      f.barrierVsShmem1node = sig(f.barrierUs1node / SHMEM_BARRIER_US);
      f.getUs1node = sig(med(one, 'getUs'));
      f.putUs1node = sig(med(one, 'putUs'));
      f.rawGetUs1node = sig(med(one, 'rawGetUs'));
      f.memgetGBps1node = sig(med(one, 'memgetGBps'));
      f.memputGBps1node = sig(med(one, 'memputGBps'));
      f.rawCopyGBps1node = sig(med(one, 'rawCopyGBps'));
      f.memgetVsRawCopy1node = sig(f.memgetGBps1node / f.rawCopyGBps1node);
      Object.assign(units, { barrierUs1node: 'µs', rawBarrierUs1node: 'µs', getUs1node: 'µs', putUs1node: 'µs', rawGetUs1node: 'µs', memgetGBps1node: 'GB/s', memputGBps1node: 'GB/s', rawCopyGBps1node: 'GB/s' });
    });
    await section(ctx, notes, 'two processes', async () => {
      // the shared segment's runs alternated with runs through the sockets
      const two: Figures[] = [], sockets: Figures[] = [];
      for (let i = 0; i < reps; i++) {
        two.push(measureOnce(dir, 2, q ? 200 : 1000, `shm${i}`));
        sockets.push(measureOnce(dir, 2, q ? 200 : 1000, `sock${i}`, { LUNA_SPMD_SHM: '0' }));
      }
      f.barrierUs2procsSockets = sig(med(sockets, 'barrierUs'));
      f.barrierSleepsPerOp2procsSockets = sig(med(sockets, 'barrierSleepsPerOp'));
      f.barrierVsSockets2procs = sig(med(two, 'barrierUs') / f.barrierUs2procsSockets);
      units.barrierUs2procsSockets = 'µs';
      f.barrierUs2procs = sig(med(two, 'barrierUs'));
      f.barrierSleepsPerOp2procs = sig(med(two, 'barrierSleepsPerOp'));
      f.getSleepsPerOp2procs = sig(med(two, 'getSleepsPerOp'));
      f.getUs2procs = sig(med(two, 'getUs'));
      f.putUs2procs = sig(med(two, 'putUs'));
      f.memgetGBps2procs = sig(med(two, 'memgetGBps'));
      f.memputGBps2procs = sig(med(two, 'memputGBps'));
      Object.assign(units, { barrierUs2procs: 'µs', getUs2procs: 'µs', putUs2procs: 'µs', memgetGBps2procs: 'GB/s', memputGBps2procs: 'GB/s' });
      // the raw transport between the same two ranks' threads, alternated with the layer's in each run
      f.rawRttUs2procs = sig(med(two, 'rawRttUs'));
      f.rawFetchGBps2procs = sig(med(two, 'rawFetchGBps'));
      f.getVsRawRtt2procs = sig(med(two, 'getVsRawRtt'));
      f.memgetVsRaw2procs = sig(med(two, 'memgetVsRaw'));
      Object.assign(units, { rawRttUs2procs: 'µs', rawFetchGBps2procs: 'GB/s' });
      notes.push('barrierUs2procs: the ranks meet in the shared segment of the machine\'s node processes; barrierUs2procsSockets: the same program through the sockets (LUNA_SPMD_SHM=0), runs alternated');
      notes.push(`across processes: rank 0 alternates 5 blocks of the layer's gets and memgets with raw round trips and raw 1 MiB fetches over ${rawSocketKind()} between the same two ranks' threads; the ratios are of the blocks' medians`);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  notes.push(`barrier vs Open MPI OpenSHMEM on one node of this machine (${SHMEM_BARRIER_US} µs, the issue's upper figure): barrierVsShmem1node`);
  return { status: 'ok', figures: f, units, targets: TARGETS, notes };
}
