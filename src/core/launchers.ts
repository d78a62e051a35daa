// How to ask each cluster launcher for more CPUs per rank, or for fewer ranks per machine. The
// runtime's note at start-up and the analysis' advice spell these alike; the advice test checks
// every option against the launcher's own help (`mpirun --help binding`, `--help mapping`).

/** A sentence's end: what to pass so that each rank gets `k` CPUs; undefined for a launcher we cannot speak for. */
export function widenBinding(launcher: string | undefined, k: number): string | undefined {
  if (launcher === 'mpirun') return `pass \`mpirun --bind-to none\` (or \`mpirun --map-by slot:PE=${k}\` to give each rank ${k} CPUs)`;
  if (launcher === 'srun') return `pass \`srun --cpus-per-task=${k}\` to give each task ${k} CPUs`;
  return undefined;
}

/** What to pass to start at most `m` ranks per machine; undefined for a launcher we cannot speak for. */
export function fewerRanks(launcher: string | undefined, m: number): string | undefined {
  if (launcher === 'mpirun') return `\`mpirun --map-by ppr:${m}:node\``;
  if (launcher === 'srun') return `\`srun --ntasks-per-node=${m}\``;
  return undefined;
}

/** Launchers that start every rank themselves (and may bind each to CPUs of its own). */
export function isClusterLauncher(launcher: string | undefined): boolean {
  return launcher === 'mpirun' || launcher === 'srun' || launcher === 'pmi';
}
