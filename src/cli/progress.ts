// A progress bar on stderr for long commands (reading, analysing, writing a trace), shown only
// to a person: stderr is a terminal and CI is not set. Otherwise every call is a no-op.
import cliProgress from 'cli-progress';

export interface Progress {
  /** start a phase of `total` units (replaces the previous one) */
  phase(name: string, total?: number): void;
  update(done: number, total?: number): void;
  stop(): void;
}

const NONE: Progress = { phase() {}, update() {}, stop() {} };

export function progressBar(stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY || process.env.CI) return NONE;
  const bar = new cliProgress.SingleBar({
    stream, format: 'luna: {phase} [{bar}] {percentage}%', hideCursor: true, clearOnComplete: true, barsize: 30,
  }, cliProgress.Presets.shades_classic);
  let started = false;
  return {
    phase(name, total = 1) {
      if (!started) { bar.start(total, 0, { phase: name }); started = true; } else { bar.setTotal(total); bar.update(0, { phase: name }); }
    },
    update(done, total) {
      if (!started) return;
      if (total !== undefined) bar.setTotal(Math.max(total, done));
      bar.update(done);
    },
    stop() { if (started) bar.stop(); started = false; },
  };
}
