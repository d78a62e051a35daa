// Says its number as it starts, then works for 5 ms: long enough for the other lane to end its
// own fragment meanwhile.
export function c_work(i: number): void {
  console.log(String(i));
  const until = performance.now() + 5;
  while (performance.now() < until);
}
