// What an atomic code fragment (an `import`) is, as every layer sees it: the front end declares
// it, the compiler numbers it, executors call it, the C++ glue and the ucode type check bind it.
// Kept here, below all of them, so that executors need neither the language nor the compiler.

/**
 * Parameter kinds (docs/language.md §4.3.2). A new kind is added to this union; every
 * `Record<ParamType, …>` table (parser, checks, compiler, calling convention, C++ glue and
 * addon, ucode type check) then fails to compile until it says what the kind means there.
 */
export type ParamType = PlainKind | 'value' | 'name' | 'block';

/** Kinds passed as plain values (the others pass a DF). */
export type PlainKind = 'int' | 'real' | 'string';

const PASSES_DF: Readonly<Record<ParamType, boolean>> = { int: false, real: false, string: false, value: true, name: true, block: true };

/** Whether parameters of kind `p` take a plain value (not a DF). */
export function isPlain(p: ParamType): p is PlainKind {
  return !PASSES_DF[p];
}

/** One import of a compiled program. */
export interface ImportDef {
  alias: string;
  /** exported symbol of the ucode module */
  symbol: string;
  params: ParamType[];
  code: number;
  /** position in CompiledProgram.imports (the ucode table of workers) */
  index: number;
  /**
   * The ucode may wait for its node (`: WAITS`, or a `block` parameter, whose acquisition may
   * wait): it runs on worker threads only, never on the system thread that would answer it.
   */
  waits: boolean;
}

/** Whether an import with these parameters and attributes may wait for its node. */
export function mayWait(params: readonly ParamType[], declared: boolean): boolean {
  return declared || params.includes('block');
}
