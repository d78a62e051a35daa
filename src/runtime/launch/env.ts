// Which launcher started this process, and this process's rank and the number of ranks.
// Open MPI is checked before Slurm because `mpirun` inside an sbatch allocation inherits the
// batch step's SLURM_PROCID=0 in every rank; Slurm's step variables are preferred over the
// allocation's SLURM_NTASKS for the same reason.

export type Launcher = 'local' | 'luna' | 'mpirun' | 'srun' | 'pmi';

export interface LaunchInfo {
  rank: number;
  size: number;
  launcher: Launcher;
}

function int(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name}=${v} is not a non-negative integer`);
  return n;
}

function pair(launcher: Launcher, rankVar: string, rank: number | undefined, sizeVar: string, size: number | undefined): LaunchInfo {
  if (rank === undefined || size === undefined) throw new Error(`${rankVar} is set but ${sizeVar} is not`);
  if (size < 1 || rank >= size) throw new Error(`${rankVar}=${rank} is out of range for ${sizeVar}=${size}`);
  return { rank, size, launcher };
}

export function detectLaunch(env: NodeJS.ProcessEnv = process.env): LaunchInfo {
  if (env.LUNA_RANK !== undefined) return pair('luna', 'LUNA_RANK', int(env, 'LUNA_RANK'), 'LUNA_SIZE', int(env, 'LUNA_SIZE'));
  if (env.OMPI_COMM_WORLD_RANK !== undefined) {
    return pair('mpirun', 'OMPI_COMM_WORLD_RANK', int(env, 'OMPI_COMM_WORLD_RANK'), 'OMPI_COMM_WORLD_SIZE', int(env, 'OMPI_COMM_WORLD_SIZE'));
  }
  if (env.SLURM_PROCID !== undefined && (env.SLURM_STEP_NUM_TASKS !== undefined || env.SLURM_NTASKS !== undefined)) {
    const sizeVar = env.SLURM_STEP_NUM_TASKS !== undefined ? 'SLURM_STEP_NUM_TASKS' : 'SLURM_NTASKS';
    return pair('srun', 'SLURM_PROCID', int(env, 'SLURM_PROCID'), sizeVar, int(env, sizeVar));
  }
  if (env.PMIX_RANK !== undefined) {
    const sizeVar = env.OMPI_COMM_WORLD_SIZE !== undefined ? 'OMPI_COMM_WORLD_SIZE' : env.PMIX_SIZE !== undefined ? 'PMIX_SIZE' : 'PMI_SIZE';
    return pair('pmi', 'PMIX_RANK', int(env, 'PMIX_RANK'), sizeVar, int(env, sizeVar));
  }
  if (env.PMI_RANK !== undefined) return pair('pmi', 'PMI_RANK', int(env, 'PMI_RANK'), 'PMI_SIZE', int(env, 'PMI_SIZE'));
  return { rank: 0, size: 1, launcher: 'local' };
}

/**
 * How many ranks of this run share this host (default worker threads per node split the cores
 * among them): every rank when luna-ts started them, else what the launcher says, else 1.
 */
export function ranksOnThisHost(info: LaunchInfo, localNodes: number, env: NodeJS.ProcessEnv = process.env): number {
  const pick = (name: string): number | undefined => {
    const v = Number(env[name]);
    return Number.isInteger(v) && v >= 1 ? v : undefined;
  };
  switch (info.launcher) {
    case 'local': return localNodes;
    case 'luna': return info.size;
    case 'mpirun': return pick('OMPI_COMM_WORLD_LOCAL_SIZE') ?? 1;
    case 'srun': return pick('SLURM_NTASKS_PER_NODE') ?? 1;
    case 'pmi': return pick('MPI_LOCALNRANKS') ?? pick('OMPI_COMM_WORLD_LOCAL_SIZE') ?? 1;
  }
}
