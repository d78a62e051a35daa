import { renameSync, writeFileSync } from 'node:fs';

const RANK = process.env.LUNA_RANK ?? process.env.OMPI_COMM_WORLD_RANK ?? process.env.PMIX_RANK ?? '0';

export function c_say(s: string): void { console.log(`${s} @${RANK}`); }

/** Write this process's pid (atomically) and block the worker for `secs` seconds. */
export function c_hold(pidfile: string, secs: number): void {
  writeFileSync(pidfile + '.tmp', `${process.pid} ${RANK}\n`);
  renameSync(pidfile + '.tmp', pidfile);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, secs * 1000);
}
