// Test/benchmark peer: `node peer.js <mode> [arg]`, started by a luna launcher (spawnLocalNodes),
// mpirun/srun (file rendezvous) or by hand.
// Modes: echo | mesh <count> | idle | launch <n> | secret <cache dir> <ucode module>.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { Decoder, Encoder } from '../../src/runtime/transport/codec.js';
import { startNode } from '../../src/runtime/launch/cluster.js';
import { bundleUcodes } from '../../src/ucode/bundle.js';
import { busyWait, runMesh, TAG_BUSY, TAG_STAMP, TAG_LOST, TAG_QUIT, TAG_REPORT, type MeshReport, type SecretProbe } from './fixture.js';

const [mode, arg = '0', arg2 = ''] = process.argv.slice(2);

/** Child processes of this process and their environment, from /proc (Linux). */
function childEnvironments(): SecretProbe['children'] {
  const out: SecretProbe['children'] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      out.push({
        comm: readFileSync(`/proc/${pid}/comm`, 'utf8').trim(),
        hasSecret: env.some((e) => e.startsWith('LUNA_SECRET=')),
        hasMarker: env.some((e) => e.startsWith('LUNA_PROBE_MARKER=')),
      });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Build a ucode bundle (starting the esbuild service) and look at what children inherit. */
async function probeSecret(cacheDir: string, ucodes: string): Promise<SecretProbe> {
  const inProcessEnv = process.env.LUNA_SECRET !== undefined;
  await bundleUcodes([ucodes], cacheDir);
  const children = childEnvironments();
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.env.LUNA_SECRET !== undefined))'], { encoding: 'utf8' });
  const workerHasSecret = await new Promise<boolean>((resolve, reject) => {
    const w = new Worker("require('node:worker_threads').parentPort.postMessage(process.env.LUNA_SECRET !== undefined)", { eval: true });
    w.once('message', (m: boolean) => resolve(m));
    w.once('error', reject);
  });
  return { inProcessEnv, children, childProcessHasSecret: child.stdout !== 'false', workerHasSecret };
}

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
  // As `luna run` does: the program (and its ucodes) is loaded before the nodes connect.
  const probe = mode === 'secret' ? await probeSecret(arg, arg2) : undefined;
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
      if (tag === TAG_BUSY) busyWait(new Decoder(body).u32());
      if (tag === TAG_STAMP) return t.send(from, tag, new Encoder().f64(Date.now()).finish());
      t.send(from, tag, body, payload);
    });
  } else if (mode === 'secret') {
    t.onMessage((_from, tag) => {
      if (tag === TAG_QUIT) void quit();
    });
    t.send(0, TAG_REPORT, Buffer.from(JSON.stringify(probe)));
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
