import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Waits (up to 20 s) until `dir/name` exists, then prints whether it appeared. */
export function c_await(dir: string, name: string): void {
  const end = Date.now() + 20_000;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(join(dir, name)) && Date.now() < end) Atomics.wait(nap, 0, 0, 5);
  console.log(existsSync(join(dir, name)) ? `${name} ran first` : `${name} never ran`);
}
export function c_touch(dir: string, name: string): void { writeFileSync(join(dir, name), ''); }
