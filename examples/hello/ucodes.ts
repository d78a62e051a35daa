// Atomic code fragments (ucodes) of examples/hello/hello.fa.
import type { DF } from '../../src/ucode/df.js';

export function c_hello(): void {
  console.log('Hello from LuNA-ts!');
}

export function c_greet(who: string, text: DF): void {
  text.setString(`Hello, ${who}!`);
}

export function c_init(v: number, x: DF): void {
  x.setInt(v);
}

export function c_add(a: DF, b: DF, sum: DF): void {
  sum.setInt(a.getInt() + b.getInt());
}

export function c_report(text: DF, a: DF, b: DF, sum: DF, sq1: DF, sq2: DF, sq3: DF): void {
  const greeting = text.getString();
  const [x, y, s] = [a.getInt(), b.getInt(), sum.getInt()];
  const squares = [sq1.getInt(), sq2.getInt(), sq3.getInt()];
  console.log(greeting);
  console.log(`${x} + ${y} = ${s}`);
  console.log(`squares: ${squares.join(' ')}`);
  const ok =
    greeting === 'Hello, world!' &&
    s === 42 &&
    squares.join(',') === '1,4,9' &&
    text.getSize() === greeting.length + 1 &&
    sum.getSize() === 4;
  if (!ok) {
    console.log(`hello: FAILED (text=${JSON.stringify(greeting)}, sum=${s}, squares=${squares.join(',')})`);
    throw new Error('hello: result mismatch');
  }
  console.log('hello: OK');
}
