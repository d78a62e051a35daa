// The worker side of the dynamic array: `block` arguments naming an array (`{ block: 'dda', … }`)
// are held through the request port — the CF waits while another CF holds its node's block or
// a global operation locks it (a wait of kind 'descriptor') — and released when the CF ends:
// the marked elements are removed by the array's defragmentation on this thread and the elements
// given another node packed per destination (DdaBlock.settle), then the count, the parts (and
// the memory, when the ucode resized it) go back to the node.
import { registerBlockKind } from '../exec/blocks.js';
import { DdaBlock, arrayRequest, type DdaHandle, type DefragOrder } from '../../ucode/dda.js';

registerBlockKind('dda', {
  hold(h, ctx) {
    const req = arrayRequest(h as unknown as DdaHandle);
    const g = ctx.request('dda.acquire', req) as { buffer: SharedArrayBuffer; numel: number; size: number; elsize: number; order: DefragOrder; name: string; rank: number; nodes: number; index: number; blocks: number };
    const view = new DdaBlock(g.elsize, g.buffer, g.numel, g.order, g.name, g.size);
    view.index = g.index;
    view.blocks = g.blocks;
    return {
      view,
      release: () => {
        const parts = view.settle(g.rank, g.nodes);
        ctx.post('dda.release', { array: req.array, index: req.index, numel: view.getNumel(), size: view.getMaxSize(), buffer: view.resized ? view.buffer : undefined, parts: parts.length > 0 ? parts : undefined });
      },
    };
  },
});
