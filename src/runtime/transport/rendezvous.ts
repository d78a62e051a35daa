// Ways for ranks > 0 to find rank 0. Rank 0 then acts as the directory for everyone else's
// address (tcp.ts), so a rendezvous only ever carries one address (and maybe the secret).
import { mkdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { PeerAddress, Rendezvous } from './types.js';

/** "host:port" or "[v6]:port" → address. */
export function parseHostPort(s: string): PeerAddress {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(s.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || !m[1] || !(port > 0 && port < 65536)) throw new Error(`bad rendezvous address "${s}" (expected host:port)`);
  return { host: m[1], port };
}

export function formatHostPort(a: PeerAddress): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

/**
 * For nodes spawned by a luna launcher (spawn.ts): rank 0's address and the secret come in the
 * environment as LUNA_RENDEZVOUS=host:port and LUNA_SECRET.
 */
export function envRendezvous(env: NodeJS.ProcessEnv = process.env): Rendezvous {
  return {
    async publish() {
      throw new Error('envRendezvous is for ranks > 0; rank 0 uses launcherRendezvous');
    },
    async lookup() {
      const addr = env.LUNA_RENDEZVOUS;
      if (!addr) throw new Error('LUNA_RENDEZVOUS is not set (this process was not started by a luna launcher)');
      return { ...parseHostPort(addr), secret: env.LUNA_SECRET };
    },
  };
}

/** For the launching rank 0: once it listens, `onListening` starts the other ranks (spawnLocalNodes). */
export function launcherRendezvous(onListening: (addr: PeerAddress, secret: string) => void | Promise<void>): Rendezvous {
  return {
    async publish(addr, secret) {
      await onListening(addr, secret);
    },
    async lookup() {
      throw new Error('launcherRendezvous is for rank 0 only');
    },
  };
}

/** The launcher's job id, so concurrent jobs sharing a directory do not meet each other. */
export function jobIdFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.LUNA_JOB_ID) return env.LUNA_JOB_ID;
  if (env.PMIX_NAMESPACE) return env.PMIX_NAMESPACE;
  const ompi = env.OMPI_MCA_ess_base_jobid ?? env.OMPI_MCA_orte_ess_jobid;
  if (ompi) return `ompi-${ompi}`;
  if (env.SLURM_JOB_ID) return `slurm-${env.SLURM_JOB_ID}.${env.SLURM_STEP_ID ?? env.SLURM_STEPID ?? '0'}`;
  return undefined;
}

export interface FileRendezvousOptions {
  /** Directory shared by all hosts (default: $LUNA_RENDEZVOUS_DIR or <cwd>/.luna-rendezvous). */
  dir?: string;
  /** Job id naming the file (default: jobIdFromEnv). */
  jobId?: string;
  env?: NodeJS.ProcessEnv;
  /** How long ranks > 0 wait for the file (default 60 s). */
  timeoutMs?: number;
  pollMs?: number;
}

interface RendezvousFile {
  host: string;
  port: number;
  secret: string;
  pid: number;
  created: number;
}

/**
 * For mpirun/srun, which start every rank themselves: rank 0 writes {host, port, secret} to
 * <dir>/<job id>.json (mode 0600, atomically by rename); the others poll for it.
 */
export function fileRendezvous(o: FileRendezvousOptions = {}): Rendezvous & { readonly file: string } {
  const env = o.env ?? process.env;
  const jobId = o.jobId ?? jobIdFromEnv(env);
  if (!jobId) {
    throw new Error('file rendezvous needs a job id: none of PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid, SLURM_JOB_ID, LUNA_JOB_ID is set');
  }
  const dir = o.dir ?? env.LUNA_RENDEZVOUS_DIR ?? path.join(process.cwd(), '.luna-rendezvous');
  const file = path.join(dir, `${jobId.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);
  const timeoutMs = o.timeoutMs ?? 60_000;
  const pollMs = o.pollMs ?? 50;
  return {
    file,
    async publish(addr, secret) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const content: RendezvousFile = { host: addr.host, port: addr.port, secret, pid: process.pid, created: Date.now() };
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify(content), { mode: 0o600 });
      await rename(tmp, file);
    },
    async lookup() {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          const f = JSON.parse(await readFile(file, 'utf8')) as RendezvousFile;
          if (typeof f.host === 'string' && typeof f.port === 'number' && typeof f.secret === 'string') {
            return { host: f.host, port: f.port, secret: f.secret };
          }
        } catch {
          // not written yet (rename makes it appear whole, so a parse error means not ours)
        }
        if (Date.now() > deadline) {
          throw new Error(
            `no rendezvous file ${file} after ${timeoutMs / 1000} s: is rank 0 running, and is ${dir} on a filesystem shared by all hosts? (set LUNA_RENDEZVOUS_DIR)`,
          );
        }
        await new Promise((r) => setTimeout(r, pollMs));
      }
    },
    async cleanup() {
      await rm(file, { force: true });
      await rmdir(dir).catch(() => {}); // only if empty
    },
  };
}
