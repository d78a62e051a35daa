// An in-memory mesh of SPMD nodes in this process that counts the layer's messages each node
// sends, by tag (tests assert what an operation costs in messages).
import { MemoryMesh } from '../../src/runtime/transport/memory.js';
import { CHANNEL } from '../../src/runtime/cluster/channels.js';

export function countingMesh(nodes: number): { mesh: MemoryMesh; sent: Map<number, number>[] } {
  const mesh = new MemoryMesh(nodes);
  const sent = mesh.endpoints.map((tp) => {
    const counts = new Map<number, number>();
    const send = tp.send.bind(tp);
    tp.send = (to, wire, body, payload) => {
      if (wire >>> 16 === CHANNEL.spmd) counts.set(wire & 0xffff, (counts.get(wire & 0xffff) ?? 0) + 1);
      return send(to, wire, body, payload);
    };
    return counts;
  });
  return { mesh, sent };
}
