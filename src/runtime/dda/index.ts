// The dynamic array as a layer a run is given (RunOptions.layers): on every node its DdaNode
// (layer.ts) joins the router, the control protocol and the request desk; every worker imports
// dda-worker.ts (bundled beside the worker under the same name), which makes `{ block: 'dda' }` arguments hold the node's block.
import { fileURLToPath } from 'node:url';
import type { UcodeLayer } from '../exec/desk.js';
import type { ClusterLayer, LayerNode } from '../cluster/layer.js';
import { DdaNode, type RearrangeDone } from './layer.js';

export { DdaNode, type ArraySpec, type RearrangeDone } from './layer.js';

export const DDA_WORKER = fileURLToPath(new URL('./dda-worker.js', import.meta.url));

/** The layer; `nodes` collects each node's DdaNode as it joins (tests, benchmarks). */
export function dynamicArrays(onDone?: (d: RearrangeDone & { node: number }) => void): UcodeLayer & ClusterLayer & { nodes: DdaNode[] } {
  const nodes: DdaNode[] = [];
  return {
    nodes,
    workerModules: [DDA_WORKER],
    join(n: LayerNode): void {
      const d = new DdaNode(n.router, n.control, n.host);
      if (onDone) d.onDone = (x) => onDone({ ...x, node: n.router.rank });
      d.register(n.desk);
      nodes[n.router.rank] = d;
    },
  };
}
