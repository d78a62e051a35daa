// `luna check`: every diagnostic of the program and of its ucodes (built, and type-checked
// against the imports); exit 1 on errors.
import { hasErrors } from '../lang/diagnostics.js';
import { loadProgram } from '../program/load.js';
import { programCacheDir } from './program-cache.js';

export async function checkCommand(file: string, o: { define: Record<string, string>; ucodes?: string; cxxflags?: string; json?: boolean; cache?: boolean }): Promise<number> {
  const cache = programCacheDir(o.cache !== false);
  if ('error' in cache) { process.stderr.write(`luna: error: ${cache.error}\n`); return 2; }
  const loaded = await loadProgram(file, { defines: o.define, ucodes: o.ucodes?.split(',').filter(Boolean), cxxflags: o.cxxflags, typecheck: true, programCache: cache.dir });
  const failed = hasErrors(loaded.diagnostics) || !loaded.program;
  if (o.json) process.stdout.write(JSON.stringify({ file, ok: !failed, diagnostics: loaded.diagnostics }, null, 2) + '\n');
  else if (loaded.diagnostics.length > 0) process.stderr.write(loaded.text + '\n');
  return failed ? 1 : 0;
}
