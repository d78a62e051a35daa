// Rank argv[0] throws after the first barrier while every other rank waits at the second.
import { MYTHREAD, barrier } from 'luna-ts/spmd';

export default function main(args: string[]): void {
  barrier();
  if (MYTHREAD === Number(args[0])) throw new Error(`rank ${MYTHREAD} gives up`);
  barrier();
}
