// The generated glue of a program's C++ ucodes: one translation unit per user source file,
// which includes that file and then, for each import placed in it, a uniform entry point
// `int luna_call_<alias>(luna_frame *)` (see native/luna_ucode_abi.h). The entry point calls the
// user's function directly, with its real C++ types deduced from the declaration (so no libffi,
// and `InputDF` by value or `const InputDF &` both work). Compile-time checks, one per line,
// say what is wrong when the function is missing or its parameters do not fit the `import`;
// `lines` maps those lines back to the import.
import type { ParamType } from '../../core/imports.js';
import type { Origin } from '../../lang/source.js';
import { kindsOf } from './native.js';

export interface GlueImport {
  alias: string;
  /** the C++ function's name */
  symbol: string;
  params: ParamType[];
  /** the import's `code` name in the program */
  origin?: Origin;
}

export type GlueCheck =
  | { what: 'declared'; imp: number }
  | { what: 'arity'; imp: number }
  | { what: 'param'; imp: number; param: number }
  | { what: 'entry'; imp: number };

export interface GlueUnit {
  /** the user source it includes */
  source: string;
  text: string;
  /** line (1-based) → what an error there means */
  lines: Map<number, GlueCheck>;
}

const CPP_TYPE: Record<ParamType, string> = {
  int: 'int', real: 'double', string: 'const char *', value: 'const InputDF &', name: 'OutputDF &', block: 'DdaBlock &',
};
const CPP_ALSO: Record<ParamType, string> = {
  int: ' (or another arithmetic type)', real: ' (or another arithmetic type)', string: ' (or std::string)', value: ' (or InputDF)', name: '', block: '',
};

/** What the C++ parameter for a LuNA parameter kind may be. */
export function expectedCppType(p: ParamType, alternatives = false): string {
  return CPP_TYPE[p] + (alternatives ? CPP_ALSO[p] : '');
}

/** A C string literal. */
function cString(s: string): string {
  return JSON.stringify(s).replace(/\?/g, '\\?'); // no trigraphs
}

/**
 * One unit per source; `placement[i]` is the source index whose unit holds import i.
 * The first unit also defines the ABI version the addon checks.
 */
export function makeGlue(sources: readonly string[], imports: readonly GlueImport[], placement: readonly number[]): GlueUnit[] {
  return sources.map((source, si) => {
    const lines: string[] = [];
    const map = new Map<number, GlueCheck>();
    const add = (text: string, check?: GlueCheck): void => {
      lines.push(text);
      if (check) map.set(lines.length, check);
    };
    add(`#include ${cString(source)}`);
    add('#include "ucenv.h"');
    if (si === 0) add('extern "C" { extern const int luna_ucode_abi; const int luna_ucode_abi = LUNA_UCODE_ABI_VERSION; }');
    imports.forEach((imp, k) => {
      if (placement[k] !== si) return;
      const f = `luna_fn_${imp.alias}`;
      const kinds = kindsOf(imp.params);
      const list = imp.params.join(', ');
      add(`using ${f} = decltype(&${imp.symbol});`, { what: 'declared', imp: k });
      add(`static_assert(::luna::ucenv::detail::arity<${f}>() == ${imp.params.length}, ${cString(`${imp.symbol} must take ${imp.params.length} parameters (${list}), as its import says`)});`, { what: 'arity', imp: k });
      imp.params.forEach((p, i) => {
        add(`static_assert(::luna::ucenv::detail::param_ok<${f}, ${i}>('${kinds[i]}'), ${cString(`parameter ${i + 1} of ${imp.symbol} is ${p} in the import: its C++ type must be ${expectedCppType(p, true)}`)});`, { what: 'param', imp: k, param: i });
      });
      const ks = Array.from(kinds, (c) => `'${c}'`).join(', ');
      add(`extern "C" int luna_call_${imp.alias}(luna_frame *f) { return ::luna::ucenv::detail::invoke<${ks}>(f, &${imp.symbol}); }`, { what: 'entry', imp: k });
      add(`extern "C" { extern const char luna_kinds_${imp.alias}[]; const char luna_kinds_${imp.alias}[] = ${cString(kinds)}; }`, { what: 'entry', imp: k });
    });
    return { source, text: lines.join('\n') + '\n', lines: map };
  });
}
