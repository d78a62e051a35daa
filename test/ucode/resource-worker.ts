// The worker side of the test resource (resource.ts): blocks of kind 'test' are its locked
// resources, held through the request port and released by a post when the CF ends.
import { registerBlockKind } from '../../src/runtime/exec/blocks.js';

registerBlockKind('test', {
  hold(h, ctx) {
    const { bytes } = ctx.request('test.acquire', { id: String(h.id) }) as { bytes: Uint8Array };
    return { view: { id: String(h.id), bytes, counter: new Int32Array(bytes.buffer, 0, 1) }, release: () => ctx.post('test.release', { id: String(h.id) }) };
  },
});
