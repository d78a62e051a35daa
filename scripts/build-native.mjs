// npm `install` hook: build the native addons with node-gyp: the thread CPU clock
// (native/thread_clock.c), the memory policy for large buffers and the C heap counts (native/memory.c), descriptors of
// the transport's direct links (native/fd.c; without it no thread writes a socket directly) and the C++
// ucode runner (native/luna_ucode.cc), and on Linux the memory node processes of one machine share
// (native/shm.c, the SPMD layer's barrier among them). It must never fail the install: without the clock the
// trace falls back to an approximate CPU clock and says so (src/trace/clock.ts); without the
// memory policy large buffers are allocated as glibc does by default (src/runtime/exec/shm.ts);
// without the runner TypeScript programs work and a program with C++ ucodes gets one clear
// message (src/ucode/cpp/native.ts). On failure: a warning line, exit 0.
// Then the OTF2 writer helper (native/otf2_writer.c → build/Release/luna-otf2), a plain program
// linked statically against the OTF2 library where that is installed (Debian: libotf2-trace-dev);
// without it `luna export otf2` says what to install and every other command is unaffected.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quiet = { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 180_000 };

// Candidates in order: node-gyp on PATH (npm adds it in lifecycle scripts), npm's bundled copy
// next to the npm running us or next to this node binary, then npx (offline, so a missing copy fails fast instead of fetching).
function candidates() {
  const list = [['node-gyp', []]];
  const npmCli = process.env.npm_execpath;
  if (npmCli) {
    const bundled = join(dirname(npmCli), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    if (existsSync(bundled)) list.push([process.execPath, [bundled]]);
  }
  // npm installed beside this node binary (run outside npm, e.g. `node scripts/build-native.mjs`).
  const beside = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (existsSync(beside)) list.push([process.execPath, [beside]]);
  list.push(['npx', ['--no-install', 'node-gyp']]);
  return list;
}

// Build against the headers installed with this node (never download them: machines may be
// offline). npm passes its `nodedir` setting as npm_config_nodedir; outside npm we look beside
// the node binary.
function nodedirArgs() {
  if (process.env.npm_config_nodedir) return [];
  const prefix = join(dirname(process.execPath), '..');
  return existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? [`--nodedir=${prefix}`] : [];
}

const built = (name) => existsSync(join(root, 'build', 'Release', `${name}.node`));
const ADDONS = [
  ['thread_clock', 'thread CPU clock addon not built', 'traces will mark CPU times as approximate'],
  ['luna_memory', 'memory policy addon not built', 'large DFs received from other nodes are allocated fresh every time (slower on machines with costly page faults)'],
  ...(process.platform === 'linux' ? [['luna_shm', 'shared-memory addon not built', 'SPMD barriers between node processes of one machine go through their sockets (slower)']] : []),
  ['luna_ucode', 'C++ ucode addon not built', 'programs with C++ ucodes cannot run (TypeScript ucodes are not affected); install g++ and run `npm rebuild luna-ts`'],
];

// The OTF2 helper: cc with the flags otf2-config gives (or the Debian defaults), static library
// first so the program runs where the library's shared object is absent.
function buildOtf2() {
  const out = join(root, 'build', 'Release', 'luna-otf2');
  const cfg = (flag) => {
    const r = spawnSync('otf2-config', [flag], quiet);
    return r.status === 0 ? r.stdout.trim().split(/\s+/).filter(Boolean) : null;
  };
  const cflags = cfg('--cflags') ?? [];
  const ldflags = cfg('--ldflags') ?? [];
  mkdirSync(dirname(out), { recursive: true });
  let why = 'no C compiler';
  for (const libs of [['-Wl,-Bstatic', '-lotf2', '-Wl,-Bdynamic'], ['-lotf2']]) {
    for (const cc of new Set([process.env.CC ?? 'cc', 'gcc'])) {
      const r = spawnSync(cc, ['-O2', '-o', out, ...cflags, join(root, 'native', 'otf2_writer.c'), ...ldflags, ...libs], quiet);
      if (r.status === 0) return;
      if (!r.error) why = `${r.stderr ?? ''}`.split('\n').find((l) => /error/i.test(l)) ?? `exit ${r.status}`;
    }
  }
  console.warn(`luna-ts: warning: OTF2 export helper not built (${why.trim()}); luna export otf2 needs the OTF2 library (Debian: apt-get install libotf2-trace-dev, then npm rebuild luna-ts)`);
}

let lastError = 'node-gyp not found';
for (const [cmd, pre] of candidates()) {
  const r = spawnSync(cmd, [...pre, 'rebuild', ...nodedirArgs()], quiet);
  if (r.status === 0 && ADDONS.every(([name]) => built(name))) { buildOtf2(); process.exit(0); }
  const out = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().split('\n').filter(Boolean);
  const stack = out.map((l) => /gyp ERR! stack Error: (.*)/.exec(l)?.[1]).find(Boolean);
  const why = r.error ? r.error.message : stack ?? out.find((l) => /error/i.test(l)) ?? out.slice(-1)[0] ?? `exit ${r.status}`;
  if (!r.error || lastError === 'node-gyp not found') lastError = `${cmd === process.execPath ? pre[0] : cmd}: ${why}`;
}
for (const [name, what, consequence] of ADDONS) {
  if (!built(name)) console.warn(`luna-ts: warning: ${what} (${lastError}); ${consequence}`);
}
buildOtf2();
process.exit(0);
