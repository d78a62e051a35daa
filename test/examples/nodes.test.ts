// Every shipped example on one in-process node with one lane, and on 2 and 3 nodes with 1 and 2
// lanes (test/runtime/files.ts: the real runtime and cluster protocols over an in-memory mesh,
// C++ ucodes included): on one node and lane its output exactly, in order (as `luna run
// --threads 1` prints it); elsewhere the same lines in any order; and no DF held to the end (every
// req_count is reached). Through the CLI, each program once per thread count, and over node
// processes: examples.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runFile } from '../runtime/files.js';
import { CASES, SMALL } from './cases.js';

const CONFIGS = [[1, 1], [2, 1], [2, 2], [3, 1], [3, 2]] as const;

describe('examples on in-process nodes', () => {
  for (const c of [...CASES, ...SMALL]) {
    test(`${c.file} ${c.args.join(' ')}`, async () => {
      for (const [nodes, lanes] of CONFIGS) {
        const r = await runFile(c.file, { nodes, lanes, args: c.args });
        const why = `[nodes ${nodes}, lanes ${lanes}] ok ${r.ok} ${r.message ?? ''}\n${r.stdout.join('\n')}`;
        assert.equal(r.ok, true, why);
        if (nodes === 1) assert.deepEqual(r.stdout, c.out, why);
        else assert.deepEqual([...r.stdout].sort(), [...c.out].sort(), why);
        for (const n of r.nodes) assert.deepEqual(n.rt.unspentKeys(), [], `${why}\nnode ${n.rank} held DFs to the end: their req_count was not reached`);
      }
    });
  }
});
