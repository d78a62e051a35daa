// How many worker threads and local node processes a run may ask for. Each worker thread is a
// V8 isolate that loads the ucode module (about 7 MB and 0.1–0.2 s of CPU to start), and each
// local node is a whole Node.js process in an all-to-all mesh. Well past one worker per core
// they only time-share the cores, so the limits are fixed numbers far above any useful setting
// (the same on every machine, so a command line that works on a laptop works on a server) and
// low enough that a typo cannot take seconds and gigabytes before failing.

/** Worker threads per node (`--threads`, the library's `threads`). */
export const MAX_THREADS = 256;

/** Node processes the launcher starts on this machine (`--nodes`; mpirun/srun decide their own). */
export const MAX_LOCAL_NODES = 64;

/** Why the limits exist, for their error messages. */
export const THREADS_WHY = 'each worker thread costs memory and start-up time, and past one per core they only share the cores';
export const NODES_WHY = 'each node is a process on this machine (for more nodes start luna under mpirun or srun on several hosts)';
