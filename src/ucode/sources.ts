// Which files hold a program's ucodes: TypeScript/JavaScript modules (bundled, bundle.ts) and
// C++ sources (compiled, cpp/build.ts). By default `ucodes.ts` and `ucodes.cpp` beside the
// program, whichever exist; `--ucodes a.cpp,b.ts` names them. A program may mix both.
import { existsSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';

const CPP_EXTENSIONS = new Set(['.cpp', '.cc', '.cxx', '.c++', '.C']);

export function isCppSource(file: string): boolean {
  return CPP_EXTENSIONS.has(extname(file));
}

/** `ucodes.ts` and `ucodes.cpp` beside the program, those that exist. */
export function defaultUcodeFiles(programFile: string): string[] {
  const dir = dirname(resolve(programFile));
  return ['ucodes.ts', 'ucodes.cpp'].map((f) => join(dir, f)).filter((f) => existsSync(f));
}

/** Split ucode files into modules to bundle and C++ sources to compile (absolute paths). */
export function splitUcodeFiles(files: readonly string[]): { modules: string[]; cpp: string[] } {
  const abs = files.map((f) => resolve(f));
  return { modules: abs.filter((f) => !isCppSource(f)), cpp: abs.filter(isCppSource) };
}
