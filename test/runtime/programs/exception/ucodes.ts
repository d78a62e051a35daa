import type { DF } from '../../../../src/ucode/df.js';

export function c_lines(n: number): void {
  for (let k = 1; k <= n; k++) console.log(`line ${k}`);
}
export function c_say(s: string): void { console.log(s); }
export function c_explode(i: number, bad: number, x: DF): void {
  console.log(`boom ${i} runs`);
  if (i === bad) throw new Error(`kaboom in boom ${i}`);
  x.setInt(i);
}
