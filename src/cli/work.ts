// How much a command ran (fragments), for the launcher: bin/luna lets a run that ran far more
// than the one that wrote the code cache write it again (src/cli/code-cache.ts), since a cache
// holds only the functions its writer compiled.
let fragments = 0;

/** A node's run ran (inline or on its workers) `n` more fragments. */
export function noteFragmentsRun(n: number): void {
  if (Number.isFinite(n) && n > 0) fragments += n;
}

/** The fragments this process's command ran. */
export function fragmentsRun(): number {
  return fragments;
}
