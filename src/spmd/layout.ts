// Block-cyclic affinity of a shared array, as UPC lays it out: element i lies in block
// floor(i / block), blocks are dealt to ranks 0, 1, … THREADS-1, 0, 1, … and each rank keeps its
// blocks one after the other in its own part. A node stores the parts of its ranks side by side.
// Pure arithmetic, shared by the ranks and their node.

export class Layout {
  /** elements each rank's part has room for (its last block may be partly used) */
  readonly perRank: number;
  readonly blocks: number;

  constructor(readonly length: number, readonly block: number, readonly threads: number) {
    this.blocks = Math.ceil(length / block);
    this.perRank = Math.ceil(this.blocks / threads) * block;
  }

  /** the rank element i has affinity to */
  owner(i: number): number {
    return Math.floor(i / this.block) % this.threads;
  }

  /** where element i lies in its owner's part */
  localIndex(i: number): number {
    const b = Math.floor(i / this.block);
    return Math.floor(b / this.threads) * this.block + (i - b * this.block);
  }

  /** the global index of element j of rank t's part */
  globalIndex(t: number, j: number): number {
    const lb = Math.floor(j / this.block);
    return (lb * this.threads + t) * this.block + (j - lb * this.block);
  }

  /** how many elements of the array rank t holds */
  localLength(t: number): number {
    if (t >= this.blocks) return 0;
    const own = Math.floor((this.blocks - 1 - t) / this.threads) + 1;
    let n = own * this.block;
    if ((this.blocks - 1) % this.threads === t) n -= this.blocks * this.block - this.length;
    return n;
  }

  /**
   * The global range [start, start+n) cut where the owner changes: calls f(owner, local index,
   * offset in the range, count) once per piece, in order.
   */
  runs(start: number, n: number, f: (owner: number, local: number, at: number, count: number) => void): void {
    let i = start;
    const end = start + n;
    while (i < end) {
      const blockEnd = (Math.floor(i / this.block) + 1) * this.block;
      const count = Math.min(end, blockEnd) - i;
      f(this.owner(i), this.localIndex(i), i - start, count);
      i += count;
    }
  }
}
