// Give a bundle's top-level constants back their `const`.
//
// esbuild rewrites every top-level `const` of a bundle into `var` (deliberately, without an
// option). V8 folds a module-level `const` into optimized code — a typed array's identity and
// length, a lookup table — while a `var` must be reloaded and checked on every call: Task Bench's
// compute_bound kernel over a module-level Float64Array ran 2.5× slower bundled than as its own
// module. Only names that the sources declare `const` at top level are restored, and the result
// is checked by esbuild itself (a syntax error or an assignment to a restored name keeps `var`).
import { readFileSync } from 'node:fs';

const TOP_CONST = /^(?:export\s+)?const\s+([A-Za-z_$][\w$]*)\s*(?::[^=]*)?=/gm;
const TOP_VAR = /^var ([A-Za-z_$][\w$]*) = /gm;

/** Names declared `const` at the top level of these source files. */
export function topLevelConsts(files: string[]): Set<string> {
  const names = new Set<string>();
  for (const f of files) {
    let text: string;
    try { text = readFileSync(f, 'utf8'); } catch { continue; }
    for (const m of text.matchAll(TOP_CONST)) names.add(m[1]!);
  }
  return names;
}

/** The bundle with `var NAME = …` turned back into `const` for the names given; unchanged when in doubt. */
export async function restoreConsts(code: string, names: Set<string>): Promise<string> {
  const { transform } = await import('esbuild');
  const keep = new Set<string>();
  for (let round = 0; round < 3; round++) {
    const out = code.replace(TOP_VAR, (all, name: string) => (names.has(name) && !keep.has(name) ? `const ${name} = ` : all));
    if (out === code) return code;
    let warnings;
    try {
      ({ warnings } = await transform(out, { format: 'esm', loader: 'js', logLevel: 'silent' }));
    } catch {
      return code;
    }
    // assignments to the names restored (the sources' own const mistakes are not ours to judge)
    const assigned = warnings.filter((w) => w.id === 'assign-to-constant')
      .map((w) => /"([^"]+)"/.exec(w.text)?.[1] ?? '').filter((n) => names.has(n) && !keep.has(n));
    if (assigned.length === 0) return out;
    for (const n of assigned) keep.add(n);
  }
  return code;
}
