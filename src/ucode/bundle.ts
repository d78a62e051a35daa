// Bundle the program's TypeScript ucode modules once per run with esbuild into a cache file
// that every worker thread imports (no TypeScript loader at run time).
import { build, type Message } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { launchSecret } from '../runtime/launch/secret.js';

export interface UcodeBundle {
  /** absolute path of the bundled ESM file (undefined when the program has no ucode module) */
  file?: string;
  /** names exported by the ucode modules */
  exports: Set<string>;
  /** the source modules bundled */
  sources: string[];
}

export class UcodeBundleError extends Error {}

/** Default: `ucodes.ts` beside the program, when it exists. */
export function defaultUcodeSources(programFile: string): string[] {
  const f = join(dirname(resolve(programFile)), 'ucodes.ts');
  return existsSync(f) ? [f] : [];
}

export async function bundleUcodes(sources: string[], cacheDir: string): Promise<UcodeBundle> {
  if (sources.length === 0) return { exports: new Set(), sources };
  for (const s of sources) if (!existsSync(s)) throw new UcodeBundleError(`ucode module not found: ${s}`);
  // One virtual entry re-exporting every module, so several files form one namespace.
  const entry = sources.map((s) => `export * from ${JSON.stringify(resolve(s))};`).join('\n');
  // The esbuild service process inherits process.env: make sure the run's secret is out of it.
  launchSecret();
  let result;
  try {
    result = await build({
      stdin: { contents: entry, resolveDir: process.cwd(), loader: 'ts', sourcefile: 'luna-ucodes-entry.ts' },
      bundle: true, format: 'esm', platform: 'node', target: 'node20', write: false,
      metafile: true, logLevel: 'silent', sourcemap: 'inline', outfile: join(resolve(cacheDir), 'ucodes.mjs'), // source paths relative to the cache dir
    });
  } catch (e) {
    const errors = (e as { errors?: Message[] }).errors ?? [];
    const text = errors.map((m) => m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ${m.text}` : m.text).join('\n');
    throw new UcodeBundleError(`cannot build the ucode module:\n${text || String(e)}`);
  }
  const out = result.outputFiles[0];
  const meta = Object.values(result.metafile.outputs)[0];
  const hash = createHash('sha256').update(out.contents).digest('hex').slice(0, 16);
  mkdirSync(cacheDir, { recursive: true });
  const file = join(cacheDir, `ucodes-${hash}.mjs`);
  if (!existsSync(file)) writeFileSync(file, out.contents);
  return { file, exports: new Set(meta?.exports ?? []), sources };
}
