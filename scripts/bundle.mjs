// Bundles the compiled CLI (dist/src/cli/main.js) and the worker thread's entry into
// dist/bundle/: `bin/luna` loads these few files instead of ~75 modules, which takes a run's
// start-up from ~0.35 to ~0.25 s and its peak memory down by ~8 MB (module records, source text
// and compiled code of separate files; docs/runtime.md, "Start-up and memory").
// Commands other than `run` stay in chunks loaded on demand (splitting); packages are loaded
// from node_modules as before, except the argument parser, which every command needs.
// Run by `npm run build` after tsc.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
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

// The CLI once more as one CommonJS file (dist/bundle/main.cjs, beside the chunks so that the
// worker entries it names by relative URL are found), for Node 20, which has no code cache for ES
// modules: `bin/luna` compiles it as a script with V8's code cache of the functions an earlier run
// compiled (src/cli/code-cache.ts; docs/runtime.md, "Start-up: a code cache on Node 20"). Node 22+
// uses its own compile cache over the ES modules above instead.
const cjs = join(outdir, 'main.cjs');
// built in memory and renamed into place once its imports are rewritten (below): a run that
// starts during a rebuild reads the old file or the finished one, never esbuild's raw output
const built = await build({
  absWorkingDir: root,
  entryPoints: ['dist/src/cli/main.js'],
  outfile: cjs,
  write: false,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: Object.keys(pkg.dependencies).filter((d) => d !== 'commander'),
  minifyWhitespace: true,
  minifySyntax: true,
  // a script has no import.meta: its URL from the file the loader names
  define: { 'import.meta.url': '__lunaImportMetaUrl' },
  banner: { js: "const __lunaImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
  plugins: [lazyChildProcess],
});
// import() in a script needs a loader callback, which Node 20 loses for functions read from the
// code cache: every dynamic import (packages loaded on demand, TypeScript ucode modules) becomes a
// call of `__lunaImport`, which the loader passes in (an import() of bin/luna's own). The calls
// are found by TypeScript's parser, not by text, so a string that mentions import( stays as it is.
{
  const ts = (await import('typescript')).default;
  const text = built.outputFiles.find((f) => f.path === cjs).text;
  const at = [];
  const visit = (n) => {
    if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) at.push(n.expression.getStart());
    ts.forEachChild(n, visit);
  };
  visit(ts.createSourceFile(cjs, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS));
  let out = '', from = 0;
  for (const i of at) { out += text.slice(from, i) + '__lunaImport'; from = i + 'import'.length; }
  const tmp = `${cjs}.${process.pid}.tmp`;
  writeFileSync(tmp, out + text.slice(from));
  renameSync(tmp, cjs);
}
