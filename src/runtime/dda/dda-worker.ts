// The worker side of the dynamic array: `block` arguments naming an array (`{ block: 'dda', … }`)
// are held by the reservation the handle carries when the node made one as it sent the CF, else
// through the request port — the CF waits while another CF holds its node's block or a global
// operation locks it (a wait of kind 'descriptor') — and released when the CF ends:
// the marked elements are removed by the array's defragmentation on this thread and the elements
// given another node packed per destination (DdaBlock.settle), then the count, the parts (and
// the memory, when the ucode resized it) go back to the node.
import { registerBlockKind } from '../exec/blocks.js';
import { DdaBlock, arrayRequest, type DdaHandle } from '../../ucode/dda.js';
import type { DdaReservation, Granted } from './layer.js';

registerBlockKind('dda', {
  hold(h, ctx) {
    const req = arrayRequest(h as unknown as DdaHandle);
    // reserved as the CF was sent (layer.ts reserve): claimed unless the node took it back for
    // someone who asked for the block meanwhile; then asked for, as without a reservation
    const r = (h as { reserved?: DdaReservation }).reserved;
    const g = r !== undefined && Atomics.compareExchange(new Int32Array(r.word), 0, r.token, -r.token) === r.token ? r.grant : ctx.request('dda.acquire', req) as Granted;
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
