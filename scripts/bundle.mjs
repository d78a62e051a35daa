// Bundles the compiled CLI (dist/src/cli/main.js) and the worker thread's entry into
// dist/bundle/: `bin/luna` loads these few files instead of ~75 modules, which takes a run's
// start-up from ~0.35 to ~0.25 s and its peak memory down by ~8 MB (module records, source text
// and compiled code of separate files; docs/runtime.md, "Start-up and memory").
// Commands other than `run` stay in chunks loaded on demand (splitting); packages are loaded
// from node_modules as before, except the argument parser, which every command needs.
// Run by `npm run build` after tsc.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// commander requires child_process at load time for executable subcommands, which luna does not
// have; loading it (with net, dgram and streams) cost every command ~19 ms of start-up (CPU
// profile of `luna run` on the empty program). Inside commander it is loaded on first use.
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (a) => (/[\\/]node_modules[\\/]commander[\\/]/.test(a.importer) ? { path: 'child_process', namespace: 'lazy' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'lazy' }, () => ({
      loader: 'js',
      contents: "let cp; const get = () => (cp ??= require('node:child_process')); module.exports = { spawn: (...a) => get().spawn(...a) };",
    }));
  },
};

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'bundle');
rmSync(outdir, { recursive: true, force: true });
const pkg = (await import(join(root, 'package.json'), { with: { type: 'json' } })).default;
await build({
  absWorkingDir: root,
  entryPoints: { main: 'dist/src/cli/main.js', worker: 'dist/src/runtime/exec/worker.js', 'dda-worker': 'dist/src/runtime/dda/dda-worker.js', 'merge-worker': 'dist/src/trace/merge-worker.js' },
  outdir,
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: Object.keys(pkg.dependencies).filter((d) => d !== 'commander'),
  // whitespace and syntax only: names stay, so an internal error's stack still says where
  minifyWhitespace: true,
  minifySyntax: true,
  // commander is CommonJS: its require() of Node's modules needs a real require in ESM output
  banner: { js: "import { createRequire as __lunaRequire } from 'node:module'; const require = __lunaRequire(import.meta.url);" },
  logLevel: 'warning',
  plugins: [lazyChildProcess],
});
