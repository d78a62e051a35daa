// Test/benchmark peer: `node peer.js <mode> [arg]`, started by a luna launcher (spawnLocalNodes),
// mpirun/srun (file rendezvous) or by hand. Modes: echo | mesh <count> | idle | launch <n>.
import { Encoder } from '../../src/runtime/transport/codec.js';
import { startNode } from '../../src/runtime/launch/cluster.js';
import { runMesh, TAG_LOST, TAG_QUIT, TAG_REPORT, type MeshReport } from './fixture.js';

const [mode, arg = '0'] = process.argv.slice(2);

async function main(): Promise<void> {
  // `node --test dist/test/` also runs every file under test/ directly: do nothing then.
  if (mode === undefined) return;
  if (mode === 'launch') {
    // A launcher of its own (to test that children die with it): print pids, then wait.
    const { children } = await startNode({ nodes: Number(arg), argv: [process.argv[1]!, 'idle'] });
    console.log(JSON.stringify({ pids: [...children!.children.values()].map((c) => c.pid) }));
    setInterval(() => {}, 1000);
    return;
  }
  const { transport: t } = await startNode({});
  const quit = async (code = 0) => {
    await t.close();
    process.exit(code);
  };
  t.onPeerLost((rank, reason) => {
    if (rank === 0) {
      console.error(`peer ${t.rank}: lost rank 0 (${reason})`);
      process.exit(3);
    }
    t.send(0, TAG_LOST, new Encoder().u32(rank).string(reason).finish());
  });
  if (mode === 'echo') {
    t.onMessage((from, tag, body, payload) => {
      if (tag === TAG_QUIT) return void quit();
      t.send(from, tag, body, payload);
    });
  } else if (mode === 'mesh') {
    const reports: MeshReport[] = [];
    const onReport = (r: MeshReport) => {
      reports.push(r);
      if (reports.length < t.size) return;
      console.log(`MESH-OK ${JSON.stringify(reports)}`);
      for (let r2 = 1; r2 < t.size; r2++) t.send(r2, TAG_QUIT, new Uint8Array(0));
      void quit();
    };
    const report = await runMesh(t, Number(arg), (from, tag, body) => {
      if (tag === TAG_QUIT) void quit();
      else if (tag === TAG_REPORT) onReport(JSON.parse(Buffer.from(body).toString()) as MeshReport);
    });
    if (t.rank === 0) onReport(report);
    else t.send(0, TAG_REPORT, Buffer.from(JSON.stringify(report)));
  } else {
    t.onMessage((_from, tag) => {
      if (tag === TAG_QUIT) void quit();
    });
  }
}

main().catch((e: Error) => {
  console.error(`peer failed: ${e.message}`);
  process.exit(2);
});
