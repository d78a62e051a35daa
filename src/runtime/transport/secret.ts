// The run's secret reaches a spawned node in LUNA_SECRET. It is taken out of process.env when
// this module is first evaluated, so nothing this process starts afterwards inherits it: not the
// esbuild service (bundle.ts imports this module before esbuild), not worker threads (their
// environment is a copy of process.env), not any process a ucode starts. The transport gets
// the secret explicitly (cluster.ts).

let secret: string | undefined;
let taken = false;

/**
 * The secret this process was started with, read once from process.env, which no longer holds
 * it afterwards. Undefined when the process was not given one.
 */
export function launchSecret(): string | undefined {
  if (!taken) {
    taken = true;
    secret = process.env.LUNA_SECRET || undefined;
    delete process.env.LUNA_SECRET;
  }
  return secret;
}

launchSecret();
