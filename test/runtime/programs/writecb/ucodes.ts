export function c_write(k: number): void {
  let got = 'not called';
  process.stdout.write(`write ${k}\n`, (e?: Error | null) => { got = e === null ? 'null' : String(e); });
  process.stdout.write(`callback ${got}\n`);
}
