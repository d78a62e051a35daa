// Bundle an SPMD program (TypeScript or JavaScript) with esbuild into one ESM file that every
// rank's worker imports: `luna-ts/spmd` stays outside the bundle and points at this layer's API
// module, so the program and the rank's runtime share one instance of it. The file is named by
// its contents' hash, so concurrent nodes bundling the same program write the same file.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SPMD_API } from './paths.js';
import type { Message, Plugin } from 'esbuild';

export class ProgramBuildError extends Error {}

export async function bundleSpmdProgram(file: string, cacheDir: string): Promise<string> {
  const abs = resolve(file);
  if (!existsSync(abs)) throw new ProgramBuildError(`program not found: ${file}`);
  const { build } = await import('esbuild');
  const layer: Plugin = {
    name: 'luna-ts-spmd',
    setup(b) {
      b.onResolve({ filter: /^luna-ts\/spmd$/ }, () => ({ path: pathToFileURL(SPMD_API).href, external: true }));
    },
  };
  let result;
  try {
    result = await build({
      entryPoints: [abs], bundle: true, format: 'esm', platform: 'node', target: 'node20', write: false,
      logLevel: 'silent', sourcemap: 'inline', sourcesContent: false, plugins: [layer], outfile: join(resolve(cacheDir), 'spmd.mjs'),
    });
  } catch (e) {
    const errors = (e as { errors?: Message[] }).errors ?? [];
    const text = errors.map((m) => (m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ${m.text}` : m.text)).join('\n');
    throw new ProgramBuildError(`cannot build ${file}:\n${text || String(e)}`);
  }
  const code = result.outputFiles[0]!.text;
  const dir = resolve(cacheDir);
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `spmd-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(out)) {
    const tmp = `${out}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, out);
  }
  return out;
}
