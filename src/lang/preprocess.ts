// LuNA preprocessor (LANGUAGE.md §2): comments, macros, conditionals, includes and foreign
// blocks, producing the preprocessed text plus the origin of every output character.
//
// Diagnostic codes:
//   LUNA-P001  illegal directive (`#word` that is not a known directive)
//   LUNA-P002  undefined macro (`$NAME` with no #define / -D)
//   LUNA-P003  duplicate #define of a macro already defined
//   LUNA-P004  unterminated /* comment
//   LUNA-P005  unterminated foreign block (`${{` without `$}}`, `${<T}` without T, bad `${<`)
//   LUNA-P006  unterminated string literal
//   LUNA-P007  #else without a matching #ifdef/#ifndef
//   LUNA-P008  #endif without a matching #ifdef/#ifndef
//   LUNA-P009  missing #endif (conditional still open at end of file)
//   LUNA-P010  #include file not found
//   LUNA-P011  #include nested too deep (more than 64 levels)
//   LUNA-P012  #include cycle
//   LUNA-P013  bad macro arguments (missing/unterminated list, wrong count)
//   LUNA-P014  malformed directive (missing name/file, bad parameter list, trailing text)
//   LUNA-P015  cannot read the main source file
//   LUNA-P016  recursive macro expansion
//   LUNA-P017  duplicate #else in one conditional
//
// Design notes:
// * The input is an array of characters each tagged with its Origin, exactly like the
//   original's `.ti` tuples. Macro bodies keep the tags of their definition, so characters
//   produced by an expansion map to the macro body (what the original `.ti` does, and it points
//   errors inside a macro at the line that contains the mistake); substituted arguments keep
//   the tags of the use site. Bodies of `-D` macros have no source, so they map to the use site.
// * A macro use is replaced in the input by its expansion, which is then re-scanned.
// * Deviations from the original (luna-ts conveniences, no valid program changes meaning):
//   the `\` of a continued #define line is dropped (the newline is kept); comments after a
//   directive are allowed; macro arguments may contain balanced parentheses and strings;
//   arguments are trimmed; #include also tries the including file's directory after the path
//   list; recursion in macros is reported instead of looping forever.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Diagnostic } from './diagnostics.js';
import type { ForeignBlock, Origin, Preprocessed } from './source.js';
import { error, noOrigin } from './origin.js';

export interface PreprocessOptions {
  /** `-D key=value` macros (parameterless) */
  defines?: Record<string, string>;
  /** directories searched by #include (default: the current working directory) */
  includePath?: string[];
  /** file reader (default: fs.readFileSync as UTF-8); throws when the file does not exist */
  readFile?: (path: string) => string;
}

const MAX_INCLUDE_DEPTH = 64;

interface Macro {
  name: string;
  params: string[] | null;
  body: string[];
  /** per body char; null for -D macros (mapped to the use site) */
  bodyOrigins: Origin[] | null;
}

interface Cond {
  /** the current branch is emitted (includes the parents' state) */
  active: boolean;
  parentActive: boolean;
  /** the #ifdef condition itself */
  value: boolean;
  seenElse: boolean;
  origin: Origin;
}

interface Expansion {
  name: string;
  /** index one past the expansion's last character in the input buffer */
  end: number;
}

const isWordStart = (c: string | undefined): boolean =>
  c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_');
const isWord = (c: string | undefined): boolean => isWordStart(c) || (c !== undefined && c >= '0' && c <= '9');
const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r';

/** Tag every character of `text` with its 1-based line and column in `file`. */
function tag(file: string, text: string): Origin[] {
  const out: Origin[] = new Array(text.length);
  let line = 1, col = 1;
  for (let i = 0; i < text.length; i++) {
    out[i] = { file, line, col };
    if (text[i] === '\n') { line++; col = 1; } else col++;
  }
  return out;
}

class Preprocessor {
  readonly out: string[] = [];
  readonly outOrigins: Origin[] = [];
  readonly blocks: ForeignBlock[] = [];
  readonly files: string[] = [];
  readonly diagnostics: Diagnostic[] = [];
  readonly macros = new Map<string, Macro>();
  private readonly includePath: string[];
  private readonly readFile: (p: string) => string;
  /** canonical paths of the files being processed (include cycle detection) */
  private readonly stack: string[] = [];

  constructor(opts: PreprocessOptions) {
    this.includePath = opts.includePath ?? ['.'];
    this.readFile = opts.readFile ?? ((p) => fs.readFileSync(p, 'utf8'));
    for (const [name, value] of Object.entries(opts.defines ?? {})) {
      this.macros.set(name, { name, params: null, body: [...value], bodyOrigins: null });
    }
  }

  private err(code: string, message: string, origin: Origin): void {
    this.diagnostics.push(error(code, message, origin));
  }

  run(file: string): void {
    let text: string;
    try {
      text = this.readFile(file);
    } catch (e) {
      this.err('LUNA-P015', `cannot read source file '${file}': ${(e as Error).message}`, noOrigin(file));
      this.files.push(file);
      return;
    }
    this.processFile(file, text, 0);
  }

  /** Try the include path, then the including file's directory. */
  private resolveInclude(name: string, from: string): { file: string; text: string } | null {
    const candidates = path.isAbsolute(name)
      ? [name]
      : [...this.includePath.map((d) => path.join(d, name)), path.join(path.dirname(from), name)];
    for (const c of candidates) {
      try {
        return { file: c, text: this.readFile(c) };
      } catch {
        /* try the next directory */
      }
    }
    return null;
  }

  private processFile(file: string, text: string, depth: number): void {
    if (!this.files.includes(file)) this.files.push(file);
    this.stack.push(path.resolve(file));
    new FileScanner(this, file, text, depth).scan();
    this.stack.pop();
  }

  include(name: string, from: string, depth: number, origin: Origin): void {
    const found = this.resolveInclude(name, from);
    if (!found) {
      this.err('LUNA-P010', `include file not found: "${name}"`, origin);
      return;
    }
    const key = path.resolve(found.file);
    const at = this.stack.indexOf(key);
    if (at >= 0) {
      const chain = [...this.stack.slice(at), key].map((p) => path.basename(p)).join(' -> ');
      this.err('LUNA-P012', `include cycle: ${chain}`, origin);
      return;
    }
    if (depth + 1 > MAX_INCLUDE_DEPTH) {
      this.err('LUNA-P011', `#include nested too deep (more than ${MAX_INCLUDE_DEPTH} levels): "${name}"`, origin);
      return;
    }
    this.processFile(found.file, found.text, depth + 1);
  }
}

/** Scans one file (and the macro expansions spliced into it). */
class FileScanner {
  private readonly cs: string[];
  private readonly os: Origin[];
  private i = 0;
  private readonly conds: Cond[] = [];
  private expansions: Expansion[] = [];

  constructor(
    private readonly pp: Preprocessor,
    private readonly file: string,
    text: string,
    private readonly depth: number,
  ) {
    this.cs = text.split(''); // UTF-16 units, like every offset and column in luna-ts
    this.os = tag(file, text);
  }

  private get skipping(): boolean {
    const top = this.conds[this.conds.length - 1];
    return top !== undefined && !top.active;
  }

  private at(k = 0): string | undefined {
    return this.cs[this.i + k];
  }

  private emit(c: string, o: Origin): void {
    if (this.skipping) return;
    this.pp.out.push(c);
    this.pp.outOrigins.push(o);
  }

  private err(code: string, message: string, origin: Origin): void {
    this.pp.diagnostics.push(error(code, message, origin));
  }

  scan(): void {
    const { cs } = this;
    // interpreter line: dropped, its newline kept
    if (cs[0] === '#' && cs[1] === '!' && cs[2] === '/') while (this.i < cs.length && cs[this.i] !== '\n') this.i++;
    while (this.i < cs.length) {
      if (this.expansions.length) this.expansions = this.expansions.filter((e) => e.end > this.i);
      const c = cs[this.i]!;
      const n = cs[this.i + 1];
      if (c === '"') this.string();
      else if (c === '/' && n === '/') this.lineComment();
      else if (c === '/' && n === '*') this.blockComment();
      else if (c === '#' && isWordStart(n)) this.directive();
      else if (c === '$' && n === '{') this.foreignBlock();
      else if (this.skipping) this.i++;
      else if (c === '`') {
        this.i++;
        while (isWord(this.at())) this.i++;
      } else if (c === '$' && isWordStart(n)) this.macroUse();
      else {
        this.emit(c, this.os[this.i]!);
        this.i++;
      }
    }
    for (const c of this.conds) this.err('LUNA-P009', 'missing #endif for this conditional', c.origin);
  }

  // ----------------------------------------------------------------------------- lexical bits

  /** `"..."` copied verbatim; `\` protects the next character. */
  private string(): void {
    const start = this.i;
    this.emit('"', this.os[this.i++]!);
    while (this.i < this.cs.length) {
      const c = this.cs[this.i]!;
      if (c === '\\' && this.i + 1 < this.cs.length) {
        this.emit(c, this.os[this.i++]!);
        this.emit(this.cs[this.i]!, this.os[this.i++]!);
        continue;
      }
      this.emit(c, this.os[this.i++]!);
      if (c === '"') return;
    }
    this.err('LUNA-P006', 'unterminated string literal', this.os[start]!);
  }

  /** `// …` up to (not including) the newline; `\`+newline continues the comment. */
  private lineComment(): void {
    while (this.i < this.cs.length && this.cs[this.i] !== '\n') {
      if (this.cs[this.i] === '\\' && this.cs[this.i + 1] === '\n') this.i++;
      else if (this.cs[this.i] === '\\' && this.cs[this.i + 1] === '\r' && this.cs[this.i + 2] === '\n') this.i += 2;
      this.i++;
    }
  }

  private blockComment(): void {
    const start = this.i;
    this.i += 2;
    while (this.i < this.cs.length && !(this.cs[this.i] === '*' && this.cs[this.i + 1] === '/')) this.i++;
    if (this.i >= this.cs.length) this.err('LUNA-P004', 'unterminated comment', this.os[start]!);
    else this.i += 2;
  }

  private skipBlanks(): void {
    while (isBlank(this.at())) this.i++;
  }

  private readName(): string {
    const s = this.i;
    while (isWord(this.at())) this.i++;
    return this.cs.slice(s, this.i).join('');
  }

  /** End of a directive line: blanks, optional comments, then newline or end of input. */
  private endOfDirective(dir: string, report = !this.skipping): void {
    for (;;) {
      this.skipBlanks();
      if (this.at() === '/' && this.at(1) === '/') this.lineComment();
      else if (this.at() === '/' && this.at(1) === '*') this.blockComment();
      else break;
    }
    if (this.i < this.cs.length && this.at() !== '\n') {
      if (report) this.err('LUNA-P014', `unexpected text after #${dir}`, this.os[this.i]!);
      this.skipLine();
    }
  }

  private skipLine(): void {
    while (this.i < this.cs.length && this.at() !== '\n') this.i++;
  }

  // ------------------------------------------------------------------------------- directives

  private directive(): void {
    const origin = this.os[this.i]!;
    this.i++;
    const dir = this.readName();
    switch (dir) {
      case 'ifdef':
      case 'ifndef':
        return this.ifdef(dir, origin);
      case 'else':
        return this.else(origin);
      case 'endif':
        return this.endif(origin);
    }
    if (this.skipping) return this.skipLine();
    switch (dir) {
      case 'define':
        return this.define(origin);
      case 'undef': {
        this.skipBlanks();
        const name = this.readName();
        if (!name) this.err('LUNA-P014', '#undef needs a macro name', this.os[this.i] ?? origin);
        else this.pp.macros.delete(name);
        return this.endOfDirective(dir);
      }
      case 'include':
        return this.includeDirective(origin);
      default:
        this.err('LUNA-P001', `illegal directive: #${dir}`, origin);
        return this.skipLine();
    }
  }

  private ifdef(dir: 'ifdef' | 'ifndef', origin: Origin): void {
    this.skipBlanks();
    const name = this.readName();
    const parentActive = !this.skipping;
    if (!name && parentActive) this.err('LUNA-P014', `#${dir} needs a macro name`, this.os[this.i] ?? origin);
    const value = this.pp.macros.has(name) === (dir === 'ifdef');
    this.endOfDirective(dir, parentActive);
    this.conds.push({ active: parentActive && value, parentActive, value, seenElse: false, origin });
  }

  private else(origin: Origin): void {
    const top = this.conds[this.conds.length - 1];
    if (!top) this.err('LUNA-P007', '#else without #ifdef', origin);
    else if (top.seenElse) this.err('LUNA-P017', 'duplicate #else', origin);
    else {
      top.seenElse = true;
      top.active = top.parentActive && !top.value;
    }
    this.endOfDirective('else', top?.parentActive ?? true);
  }

  private endif(origin: Origin): void {
    if (!this.conds.pop()) this.err('LUNA-P008', '#endif without #ifdef', origin);
    this.endOfDirective('endif');
  }

  private includeDirective(origin: Origin): void {
    this.skipBlanks();
    if (this.at() !== '"') {
      this.err('LUNA-P014', '#include expects a "file" name', this.os[this.i] ?? origin);
      return this.skipLine();
    }
    this.i++;
    const s = this.i;
    while (this.i < this.cs.length && this.at() !== '"' && this.at() !== '\n') this.i++;
    if (this.at() !== '"') {
      this.err('LUNA-P014', 'unterminated #include file name', this.os[s - 1]!);
      return this.skipLine();
    }
    const name = this.cs.slice(s, this.i).join('');
    this.i++;
    this.endOfDirective('include');
    this.pp.include(name, this.file, this.depth, origin);
  }

  /** `#define N body` / `#define F(a, b) body`; body = rest of the line, `\` continues it. */
  private define(origin: Origin): void {
    this.skipBlanks();
    const nameOrigin = this.os[this.i] ?? origin;
    const name = this.readName();
    if (!name) {
      this.err('LUNA-P014', '#define needs a macro name', nameOrigin);
      return this.skipLine();
    }
    let params: string[] | null = null;
    if (this.at() === '(') {
      params = this.defineParams();
      if (!params) return this.skipLine();
    }
    if (isBlank(this.at())) this.i++; // one leading blank dropped
    const body: string[] = [];
    const bodyOrigins: Origin[] = [];
    const take = (): void => {
      body.push(this.cs[this.i]!);
      bodyOrigins.push(this.os[this.i]!);
      this.i++;
    };
    while (this.i < this.cs.length && this.at() !== '\n') {
      const c = this.at();
      if (c === '\\' && this.at(1) === '\n') {
        this.i++; // drop the backslash (original bug: kept it), keep the newline
        take();
      } else if (c === '\\' && this.at(1) === '\r' && this.at(2) === '\n') {
        this.i++;
        take();
        take();
      } else if (c === '/' && this.at(1) === '/') this.lineComment();
      else if (c === '/' && this.at(1) === '*') this.blockComment();
      else if (c === '"') {
        take();
        while (this.i < this.cs.length && this.at() !== '"' && this.at() !== '\n') {
          if (this.at() === '\\' && this.at(1) !== '\n') take();
          take();
        }
        if (this.at() === '"') take();
      } else take();
    }
    if (this.pp.macros.has(name)) {
      this.err('LUNA-P003', `duplicate #define of macro '${name}'`, nameOrigin);
      return;
    }
    this.pp.macros.set(name, { name, params, body, bodyOrigins });
  }

  private defineParams(): string[] | null {
    const open = this.os[this.i]!;
    this.i++;
    const params: string[] = [];
    this.skipBlanks();
    if (this.at() === ')') {
      this.i++;
      return params;
    }
    for (;;) {
      this.skipBlanks();
      const p = this.readName();
      this.skipBlanks();
      if (!p || (this.at() !== ',' && this.at() !== ')')) {
        this.err('LUNA-P014', 'bad #define parameter list', this.os[this.i] ?? open);
        return null;
      }
      params.push(p);
      if (this.cs[this.i++] === ')') return params;
    }
  }

  // ----------------------------------------------------------------------------------- macros

  private macroUse(): void {
    const start = this.i;
    const use = this.os[start]!;
    this.i++;
    const name = this.readName();
    const m = this.pp.macros.get(name);
    if (!m) {
      this.err('LUNA-P002', `undefined identifier: ${name}`, use);
      return;
    }
    let args: { cs: string[]; os: Origin[] }[] = [];
    if (m.params) {
      const got = this.macroArgs(name, use);
      if (!got) return;
      args = got;
      if (m.params.length === 0 && args.length === 1 && args[0]!.cs.length === 0) args = [];
      if (args.length !== m.params.length) {
        this.err('LUNA-P013', `macro '${name}' expects ${m.params.length} argument(s), got ${args.length}`, use);
        return;
      }
    }
    if (this.expansions.some((e) => e.name === name)) {
      this.err('LUNA-P016', `recursive expansion of macro '${name}'`, use);
      return;
    }
    const exp = this.expand(m, args, use);
    this.splice(start, this.i, exp.cs, exp.os);
    this.expansions.push({ name, end: start + exp.cs.length });
    this.i = start;
  }

  /** Arguments of `$F(…)`: split on top-level `,`, end at the matching `)`, `\` escapes. */
  private macroArgs(name: string, use: Origin): { cs: string[]; os: Origin[] }[] | null {
    this.skipBlanks();
    if (this.at() !== '(') {
      this.err('LUNA-P013', `macro '${name}' needs an argument list`, use);
      return null;
    }
    this.i++;
    const args: { cs: string[]; os: Origin[] }[] = [];
    let cur = { cs: [] as string[], os: [] as Origin[] };
    let depth = 0;
    const take = (): void => {
      cur.cs.push(this.cs[this.i]!);
      cur.os.push(this.os[this.i]!);
      this.i++;
    };
    while (this.i < this.cs.length) {
      const c = this.at();
      if (c === '\\' && this.i + 1 < this.cs.length) {
        this.i++;
        take();
      } else if (c === '"') {
        take();
        while (this.i < this.cs.length && this.at() !== '"') {
          if (this.at() === '\\') take();
          take();
        }
        if (this.i < this.cs.length) take();
      } else if (c === '(') {
        depth++;
        take();
      } else if (c === ')' && depth > 0) {
        depth--;
        take();
      } else if ((c === ',' || c === ')') && depth === 0) {
        args.push(trim(cur));
        cur = { cs: [], os: [] };
        this.i++;
        if (c === ')') return args;
      } else take();
    }
    this.err('LUNA-P013', `unterminated argument list of macro '${name}'`, use);
    return null;
  }

  /** Macro body with `$param` replaced by the arguments (not inside strings). */
  private expand(m: Macro, args: { cs: string[]; os: Origin[] }[], use: Origin): { cs: string[]; os: Origin[] } {
    const cs: string[] = [];
    const os: Origin[] = [];
    const b = m.body;
    const bo = (k: number): Origin => m.bodyOrigins?.[k] ?? use;
    let inString = false;
    for (let k = 0; k < b.length; k++) {
      const c = b[k]!;
      if (c === '"') inString = !inString;
      else if (inString && c === '\\' && k + 1 < b.length) {
        cs.push(c, b[k + 1]!);
        os.push(bo(k), bo(k + 1));
        k++;
        continue;
      } else if (!inString && c === '$' && m.params && isWordStart(b[k + 1])) {
        let e = k + 1;
        while (isWord(b[e])) e++;
        const idx = m.params.indexOf(b.slice(k + 1, e).join(''));
        if (idx >= 0) {
          cs.push(...args[idx]!.cs);
          os.push(...args[idx]!.os);
          k = e - 1;
          continue;
        }
      }
      cs.push(c);
      os.push(bo(k));
    }
    return { cs, os };
  }

  /** Replace input [from, to) by the expansion, keeping enclosing expansions' ends right. */
  private splice(from: number, to: number, cs: string[], os: Origin[]): void {
    this.cs.splice(from, to - from, ...cs);
    this.os.splice(from, to - from, ...os);
    const delta = cs.length - (to - from);
    for (const e of this.expansions) e.end = e.end >= to ? e.end + delta : from;
  }

  // --------------------------------------------------------------------------- foreign blocks

  /** `${{ … $}}` or `${<TERM} … TERM`, cut out and replaced by ` __block(N) `. */
  private foreignBlock(): void {
    const start = this.i;
    const at = this.os[start]!;
    let text: string[];
    let origins: Origin[];
    if (this.at(2) === '{') {
      const end = this.find(['$', '}', '}'], start + 3);
      if (end < 0) return this.unterminatedBlock(at, "'$}}'");
      text = ['{', ...this.cs.slice(start + 3, end), '}'];
      origins = [this.os[start + 2]!, ...this.os.slice(start + 3, end), this.os[end + 1]!];
      this.i = end + 3;
    } else if (this.at(2) === '<') {
      this.i += 3;
      const t0 = this.i;
      while (this.i < this.cs.length && this.at() !== '}' && this.at() !== '\n') this.i++;
      const term = this.cs.slice(t0, this.i);
      if (this.at() !== '}' || term.length === 0) return this.unterminatedBlock(at, 'a terminator in ${<TERM}');
      const bodyStart = ++this.i;
      const end = this.find(term, bodyStart);
      if (end < 0) return this.unterminatedBlock(at, `'${term.join('')}'`);
      text = this.cs.slice(bodyStart, end);
      origins = this.os.slice(bodyStart, end);
      this.i = end + term.length;
    } else {
      // a lone `${`: not a block; `$` reaches the parser, which rejects it
      this.emit('$', at);
      this.i++;
      return;
    }
    if (this.skipping) return;
    const index = this.pp.blocks.length;
    this.pp.blocks.push({ index, text: text.join(''), origin: origins[0] ?? at, origins });
    // the inserted text maps to the `$` that opened the block
    for (const c of ` __block(${index}) `) this.emit(c, at);
  }

  private unterminatedBlock(at: Origin, what: string): void {
    if (!this.skipping) this.err('LUNA-P005', `unterminated foreign block: expected ${what}`, at);
    this.i = this.cs.length;
  }

  private find(needle: string[], from: number): number {
    outer: for (let k = from; k + needle.length <= this.cs.length; k++) {
      for (let j = 0; j < needle.length; j++) if (this.cs[k + j] !== needle[j]) continue outer;
      return k;
    }
    return -1;
  }
}

function trim(a: { cs: string[]; os: Origin[] }): { cs: string[]; os: Origin[] } {
  let s = 0, e = a.cs.length;
  while (s < e && /\s/.test(a.cs[s]!)) s++;
  while (e > s && /\s/.test(a.cs[e - 1]!)) e--;
  return { cs: a.cs.slice(s, e), os: a.os.slice(s, e) };
}

/** Preprocess `file` (LANGUAGE.md §2). Never throws: problems come back as diagnostics. */
export function preprocess(file: string, opts: PreprocessOptions = {}): { pre: Preprocessed; diagnostics: Diagnostic[] } {
  const pp = new Preprocessor(opts);
  pp.run(file);
  const pre: Preprocessed = { text: pp.out.join(''), origins: pp.outOrigins, blocks: pp.blocks, files: pp.files };
  return { pre, diagnostics: pp.diagnostics };
}

/** Preprocess source text held in memory (tests, tools); includes resolve through `opts`. */
export function preprocessText(
  file: string,
  text: string,
  opts: PreprocessOptions = {},
): { pre: Preprocessed; diagnostics: Diagnostic[] } {
  const read = opts.readFile ?? ((p: string) => fs.readFileSync(p, 'utf8'));
  return preprocess(file, { ...opts, readFile: (p) => (p === file ? text : read(p)) });
}
