// LuNA preprocessor (docs/language.md §2): comments, macros, conditionals, includes and foreign
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
//   LUNA-P018  preprocessed text too large (macro expansion beyond the size limit); stops
//   LUNA-P019  macro expansion nested too deep (more than MAX_MACRO_NESTING levels)
//
// Design notes:
// * Input is read from a stack of frames: the file text at the bottom, one frame per macro
//   expansion being rescanned above it. A macro use pushes its expansion; a frame is popped
//   once read to its end. Every character is scanned once per frame it appears in, so the
//   work is linear in the expanded text (splicing expansions back into the input would be
//   quadratic in the number of uses).
// * Positions are integers (see source.ts): macro bodies keep the positions of their
//   definition, so characters produced by an expansion map to the macro body (what the
//   original `.ti` does, and it points errors inside a macro at the line that contains the
//   mistake); substituted arguments keep the positions of the use site. Bodies of `-D` macros
//   have no source, so they map to the `$` of the use.
// * A macro is active (a use of it is recursion) inside its expansion except in the text of
//   its substituted arguments, which belongs to the use site: `$F($F(1))` expands both, while
//   `#define A $A` is reported.
// * Limits (docs/reliability.md): the expanded text may not exceed
//   max(EXPANSION_FLOOR, EXPANSION_FACTOR × the size of the sources read) characters, and
//   expansions may nest at most MAX_MACRO_NESTING deep; beyond either, a positioned error and
//   the preprocessor stops (P018) or drops the use (P019).
// * Deviations from the original (luna-ts conveniences, no valid program changes meaning):
//   the `\` of a continued #define line is dropped (the newline is kept); comments after a
//   directive are allowed; macro arguments may contain balanced parentheses and strings;
//   arguments are trimmed; #include also tries the including file's directory after the path
//   list; recursion in macros is reported instead of looping forever.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DiagnosticSink, type Diagnostic } from './diagnostics.js';
import {
  MappedTextBuilder, PosMap, SourceTable, type ForeignBlock, type MappedText, type Origin, type Preprocessed,
} from './source.js';
import { error, noOrigin } from './origin.js';
import { FileError, readRegular, reason } from '../core/files.js';

export interface PreprocessOptions {
  /** `-D key=value` macros (parameterless) */
  defines?: Record<string, string>;
  /** directories searched by #include (default: the current working directory) */
  includePath?: string[];
  /** file reader (default: fs.readFileSync as UTF-8); throws when the file does not exist */
  readFile?: (path: string) => string;
  /** override of the expanded-text limit in characters (tests) */
  maxExpandedChars?: number;
}

export const MAX_INCLUDE_DEPTH = 64;
/** Macro expansions inside expansions (and arguments inside arguments) deeper than this: P019. */
export const MAX_MACRO_NESTING = 256;
/** The expanded text may always reach this many characters… */
export const EXPANSION_FLOOR = 32 * 1024 * 1024;
/** …and this many times the size of the sources read. */
export const EXPANSION_FACTOR = 4;

/** A macro body split at its parameter references, so an expansion is a concatenation. */
interface Macro {
  name: string;
  params: string[] | null;
  body: MappedText;
  /** false for -D macros: their text maps to the use site */
  sourced: boolean;
  /** [from, to) literal ranges of the body, or the index of a parameter */
  pieces: ({ from: number; to: number } | number)[];
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

/** Macros active at some point of the input: a persistent list, innermost first. */
interface Active {
  macro: Macro;
  depth: number;
  next: Active | null;
}

class Frame implements MappedText {
  /** read position */
  i = 0;
  /** the active list inside this frame's own text (made once) */
  private own: Active | null = null;
  constructor(
    readonly text: string,
    readonly map: PosMap,
    /** the macro this frame expands; null for a file */
    readonly macro: Macro | null,
    /** ascending [start, end) offsets of substituted arguments: there `macro` is not active */
    readonly argRanges: readonly number[],
    /** macros active at the use that produced this frame */
    readonly outer: Active | null,
    /** position of the `$` of that use */
    readonly use: number,
    /**
     * expansions this text is nested in: the frame's of the text its use was read from, plus one.
     * A call in an argument counts too, also when the frame around it has already ended (an
     * argument at the end of a body, `#define I(x) $x`, is read after its frame is popped).
     */
    readonly level = 0,
  ) {}

  /** Macros active at offset `at` of this frame. */
  activeAt(at: number): Active | null {
    if (this.macro === null || inRanges(this.argRanges, at)) return this.outer;
    return (this.own ??= { macro: this.macro, depth: (this.outer?.depth ?? 0) + 1, next: this.outer });
  }
}

function inRanges(r: readonly number[], at: number): boolean {
  let lo = 0, hi = (r.length >> 1) - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (at < r[2 * mid]!) hi = mid - 1;
    else if (at >= r[2 * mid + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
}

const isWordStart = (c: string | undefined): boolean =>
  c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_');
const isWord = (c: string | undefined): boolean => isWordStart(c) || (c !== undefined && c >= '0' && c <= '9');
const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r';
const isSpace = (c: string): boolean => /\s/.test(c);

/** Characters that may start something other than plain text. */
const SPECIAL = /["/#$`]/g;
const IN_STRING = /["\\]/g;
const IN_LINE_COMMENT = /[\n\\]/g;

/** Index of the first match of `re` in `s` at or after `from`, else s.length. */
function nextMatch(re: RegExp, s: string, from: number): number {
  re.lastIndex = from;
  return re.exec(s)?.index ?? s.length;
}

class Preprocessor {
  readonly out = new MappedTextBuilder();
  readonly sources = new SourceTable();
  readonly blocks: ForeignBlock[] = [];
  readonly files: string[] = [];
  private readonly fileSet = new Set<string>();
  readonly sink = new DiagnosticSink();
  readonly macros = new Map<string, Macro>();
  private readonly includePath: string[];
  private readonly readFile: (p: string) => string;
  private readonly fixedLimit: number | undefined;
  /** canonical paths of the files being processed (include cycle detection) */
  private readonly stack: string[] = [];
  /** characters of all source texts read */
  private inputChars = 0;
  /** characters of all expansions pushed */
  expanded = 0;
  limit = EXPANSION_FLOOR;
  /** set once the size limit was hit: everything stops */
  stopped = false;

  constructor(opts: PreprocessOptions) {
    this.includePath = opts.includePath ?? ['.'];
    this.readFile = opts.readFile ?? ((p) => readRegular(p, 'source file'));
    this.fixedLimit = opts.maxExpandedChars;
    if (this.fixedLimit !== undefined) this.limit = this.fixedLimit;
    for (const [name, value] of Object.entries(opts.defines ?? {})) {
      const body: MappedText = { text: value, map: PosMap.identity(0) };
      this.macros.set(name, { name, params: null, body, sourced: false, pieces: [{ from: 0, to: value.length }] });
    }
  }

  err(code: string, message: string, origin: Origin): void {
    this.sink.push(error(code, message, origin));
  }

  run(file: string): void {
    let text: string;
    try {
      text = this.readFile(file);
    } catch (e) {
      this.err('LUNA-P015', `cannot read source file '${file}': ${e instanceof FileError ? e.problem : reason(e)}`, noOrigin(file));
      this.files.push(file);
      this.fileSet.add(file);
      return;
    }
    this.processFile(file, text, 0);
  }

  /** Try the include path, then the including file's directory. */
  private resolveInclude(name: string, from: string): { file: string; text: string } | { file: string; refused: string } | null {
    const candidates = path.isAbsolute(name)
      ? [name]
      : [...this.includePath.map((d) => path.join(d, name)), path.join(path.dirname(from), name)];
    for (const c of candidates) {
      try {
        return { file: c, text: this.readFile(c) };
      } catch (e) {
        // a FIFO or a device is refused, named, not read (it could block forever)
        if (e instanceof FileError) return { file: c, refused: e.problem! };
        /* try the next directory */
      }
    }
    return null;
  }

  private processFile(file: string, text: string, depth: number): void {
    if (!this.fileSet.has(file)) {
      this.fileSet.add(file);
      this.files.push(file);
    }
    const unit = this.sources.add(file, text);
    this.inputChars += text.length;
    if (this.fixedLimit === undefined) this.limit = Math.max(EXPANSION_FLOOR, EXPANSION_FACTOR * this.inputChars);
    this.stack.push(path.resolve(file));
    new FileScanner(this, file, new Frame(text, PosMap.identity(unit.base), null, [], null, -1), depth).scan();
    this.stack.pop();
  }

  include(name: string, from: string, depth: number, origin: Origin): void {
    const found = this.resolveInclude(name, from);
    if (!found) {
      this.err('LUNA-P010', `include file not found: "${name}"`, origin);
      return;
    }
    if ('refused' in found) {
      this.err('LUNA-P010', `include file "${name}": ${found.file} ${found.refused}`, origin);
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

  /** Stop everything: the expanded text would pass the limit. Reported once, at `pos`. */
  overflow(pos: number, file: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.err('LUNA-P018', `preprocessed text too large: macro expansion would exceed ${this.limit} characters `
      + `(the limit is max(${EXPANSION_FLOOR}, ${EXPANSION_FACTOR} × the source size)); preprocessing stopped here`,
    this.sources.origin(pos, file));
  }
}

/** Scans one file and the macro expansions read inside it. */
class FileScanner {
  private readonly frames: Frame[];
  /** frames[frames.length - 1] */
  private top: Frame;
  private readonly conds: Cond[] = [];
  /** inside a conditional branch that is not emitted (kept in step with conds) */
  private skipping = false;

  constructor(
    private readonly pp: Preprocessor,
    private readonly file: string,
    bottom: Frame,
    private readonly depth: number,
  ) {
    this.frames = [bottom];
    this.top = bottom;
  }

  // ------------------------------------------------------------------------------- reading

  private updateSkipping(): void {
    const top = this.conds[this.conds.length - 1];
    this.skipping = top !== undefined && !top.active;
  }

  /** The character k places ahead, looking through the frames below when the top one ends. */
  private at(k = 0): string | undefined {
    let f = this.top;
    let idx = f.i + k;
    if (idx < f.text.length) return f.text[idx];
    for (let d = this.frames.length - 2; d >= 0; d--) {
      idx -= f.text.length;
      f = this.frames[d]!;
      idx += f.i;
      if (idx < f.text.length) return f.text[idx];
    }
    return undefined;
  }

  /** Drop frames read to their end (never the file's own). */
  private popRead(): void {
    while (this.frames.length > 1 && this.top.i >= this.top.text.length) {
      this.frames.pop();
      this.top = this.frames[this.frames.length - 1]!;
    }
  }

  private adv(): void {
    this.top.i++;
    if (this.top.i >= this.top.text.length) this.popRead();
  }

  /** At the end of the file (the top frame is the file's and is read). */
  private get eof(): boolean {
    return this.top.i >= this.top.text.length;
  }

  /** Global source position of the current character (or of the file's end). */
  private here(): number {
    return this.top.map.posAt(this.top.i);
  }

  private origin(pos: number): Origin {
    return this.pp.sources.origin(pos, this.file);
  }

  private err(code: string, message: string, pos: number): void {
    this.pp.err(code, message, this.origin(pos));
  }

  /** Emit top.text[from, to) unless skipping. */
  private emitRun(from: number, to: number): void {
    if (this.skipping || this.pp.stopped) return;
    this.pp.out.appendFrom(this.top, from, to);
    if (this.pp.out.length > this.pp.limit) this.pp.overflow(this.outermostUse(), this.file);
  }

  /** Emit the current character and move on. */
  private take(): void {
    const t = this.top;
    this.emitRun(t.i, t.i + 1);
    this.adv();
  }

  /** The `$` of the outermost macro use being expanded, else the current position. */
  private outermostUse(): number {
    return this.frames.length > 1 ? this.frames[1]!.use : this.here();
  }

  // ---------------------------------------------------------------------------------- scan

  scan(): void {
    const bottom = this.frames[0]!;
    // interpreter line: dropped, its newline kept
    if (bottom.text.startsWith('#!/')) bottom.i = nextMatch(/\n/g, bottom.text, 0);
    while (!this.pp.stopped) {
      this.popRead();
      const f = this.top;
      if (f.i >= f.text.length) break;
      // a run of plain text in one go
      const j = nextMatch(SPECIAL, f.text, f.i);
      if (j > f.i) {
        this.emitRun(f.i, j);
        f.i = j;
        continue;
      }
      const c = f.text[f.i]!;
      const n = this.at(1);
      if (c === '"') this.string();
      else if (c === '/' && n === '/') this.lineComment();
      else if (c === '/' && n === '*') this.blockComment();
      else if (c === '#' && isWordStart(n)) this.directive();
      else if (c === '$' && n === '{') this.foreignBlock();
      else if (this.skipping) this.adv();
      else if (c === '`') {
        this.adv();
        while (isWord(this.at())) this.adv();
      } else if (c === '$' && isWordStart(n)) this.macroUse();
      else this.take();
    }
    if (!this.pp.stopped) for (const c of this.conds) this.pp.err('LUNA-P009', 'missing #endif for this conditional', c.origin);
  }

  // ----------------------------------------------------------------------------- lexical bits

  /** `"..."` copied verbatim; `\` protects the next character. */
  private string(): void {
    const start = this.here();
    this.take();
    while (!this.eof) {
      const f = this.top;
      const j = nextMatch(IN_STRING, f.text, f.i);
      if (j > f.i) {
        this.emitRun(f.i, j);
        f.i = j;
        this.popRead();
        continue;
      }
      const c = f.text[f.i]!;
      if (c === '\\' && this.at(1) !== undefined) {
        this.take();
        this.take();
        continue;
      }
      this.take();
      if (c === '"') return;
    }
    this.err('LUNA-P006', 'unterminated string literal', start);
  }

  /** `// …` up to (not including) the newline; `\`+newline continues the comment. */
  private lineComment(): void {
    while (!this.eof) {
      const f = this.top;
      const j = nextMatch(IN_LINE_COMMENT, f.text, f.i);
      if (j > f.i) {
        f.i = j;
        this.popRead();
        continue;
      }
      const c = f.text[f.i];
      if (c === '\n') return;
      if (this.at(1) === '\n') this.adv();
      else if (this.at(1) === '\r' && this.at(2) === '\n') { this.adv(); this.adv(); }
      this.adv();
    }
  }

  private blockComment(): void {
    const start = this.here();
    this.adv();
    this.adv();
    for (;;) {
      const f = this.top;
      const k = f.text.indexOf('*/', f.i);
      if (k >= 0) {
        f.i = k + 2;
        this.popRead();
        return;
      }
      if (this.frames.length === 1) {
        f.i = f.text.length;
        this.err('LUNA-P004', 'unterminated comment', start);
        return;
      }
      // a `*` ending this frame may pair with a `/` after it
      const last = f.text.length - 1;
      if (last >= f.i && f.text[last] === '*' && this.at(last - f.i + 1) === '/') {
        f.i = last;
        this.adv();
        this.adv();
        return;
      }
      f.i = f.text.length;
      this.popRead();
    }
  }

  private skipBlanks(): void {
    while (isBlank(this.at())) this.adv();
  }

  private readName(): string {
    const f = this.top;
    let j = f.i;
    while (j < f.text.length && isWord(f.text[j])) j++;
    let s = f.text.slice(f.i, j);
    f.i = j;
    if (j < f.text.length) return s;
    // the name runs on past the end of this frame
    this.popRead();
    for (let c = this.at(); isWord(c); c = this.at()) {
      s += c;
      this.adv();
    }
    return s;
  }

  /** Position of the current character, or `fallback` at the end of the file. */
  private hereOr(fallback: number): number {
    return this.eof ? fallback : this.here();
  }

  /** End of a directive line: blanks, optional comments, then newline or end of input. */
  private endOfDirective(dir: string, report = !this.skipping): void {
    for (;;) {
      this.skipBlanks();
      if (this.at() === '/' && this.at(1) === '/') this.lineComment();
      else if (this.at() === '/' && this.at(1) === '*') this.blockComment();
      else break;
    }
    if (!this.eof && this.at() !== '\n') {
      if (report) this.err('LUNA-P014', `unexpected text after #${dir}`, this.here());
      this.skipLine();
    }
  }

  private skipLine(): void {
    while (!this.eof) {
      const f = this.top;
      const k = f.text.indexOf('\n', f.i);
      if (k >= 0) {
        f.i = k;
        return;
      }
      f.i = f.text.length;
      this.popRead();
    }
  }

  // ------------------------------------------------------------------------------- directives

  private directive(): void {
    const origin = this.here();
    this.adv();
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
        const at = this.hereOr(origin);
        const name = this.readName();
        if (!name) this.err('LUNA-P014', '#undef needs a macro name', at);
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

  private ifdef(dir: 'ifdef' | 'ifndef', origin: number): void {
    this.skipBlanks();
    const at = this.hereOr(origin);
    const name = this.readName();
    const parentActive = !this.skipping;
    if (!name && parentActive) this.err('LUNA-P014', `#${dir} needs a macro name`, at);
    const value = this.pp.macros.has(name) === (dir === 'ifdef');
    this.endOfDirective(dir, parentActive);
    this.conds.push({ active: parentActive && value, parentActive, value, seenElse: false, origin: this.origin(origin) });
    this.updateSkipping();
  }

  private else(origin: number): void {
    const top = this.conds[this.conds.length - 1];
    if (!top) this.err('LUNA-P007', '#else without #ifdef', origin);
    else if (top.seenElse) this.err('LUNA-P017', 'duplicate #else', origin);
    else {
      top.seenElse = true;
      top.active = top.parentActive && !top.value;
      this.updateSkipping();
    }
    this.endOfDirective('else', top?.parentActive ?? true);
  }

  private endif(origin: number): void {
    if (!this.conds.pop()) this.err('LUNA-P008', '#endif without #ifdef', origin);
    this.updateSkipping();
    this.endOfDirective('endif');
  }

  private includeDirective(origin: number): void {
    this.skipBlanks();
    if (this.at() !== '"') {
      this.err('LUNA-P014', '#include expects a "file" name', this.hereOr(origin));
      return this.skipLine();
    }
    const quote = this.here();
    this.adv();
    let name = '';
    while (!this.eof && this.at() !== '"' && this.at() !== '\n') {
      name += this.at();
      this.adv();
    }
    if (this.at() !== '"') {
      this.err('LUNA-P014', 'unterminated #include file name', quote);
      return this.skipLine();
    }
    this.adv();
    this.endOfDirective('include');
    this.pp.include(name, this.file, this.depth, this.origin(origin));
  }

  /** `#define N body` / `#define F(a, b) body`; body = rest of the line, `\` continues it. */
  private define(origin: number): void {
    this.skipBlanks();
    const nameAt = this.hereOr(origin);
    const name = this.readName();
    if (!name) {
      this.err('LUNA-P014', '#define needs a macro name', nameAt);
      return this.skipLine();
    }
    let params: string[] | null = null;
    if (this.at() === '(') {
      params = this.defineParams();
      if (!params) return this.skipLine();
    }
    if (isBlank(this.at())) this.adv(); // one leading blank dropped
    const body = new MappedTextBuilder();
    const take = (): void => {
      body.appendFrom(this.top, this.top.i, this.top.i + 1);
      this.adv();
    };
    while (!this.eof && this.at() !== '\n') {
      const c = this.at();
      if (c === '\\' && this.at(1) === '\n') {
        this.adv(); // drop the backslash (original bug: kept it), keep the newline
        take();
      } else if (c === '\\' && this.at(1) === '\r' && this.at(2) === '\n') {
        this.adv();
        take();
        take();
      } else if (c === '/' && this.at(1) === '/') this.lineComment();
      else if (c === '/' && this.at(1) === '*') this.blockComment();
      else if (c === '"') {
        take();
        while (!this.eof && this.at() !== '"' && this.at() !== '\n') {
          if (this.at() === '\\' && this.at(1) !== '\n') take();
          take();
        }
        if (this.at() === '"') take();
      } else take();
    }
    if (this.pp.macros.has(name)) {
      this.err('LUNA-P003', `duplicate #define of macro '${name}'`, nameAt);
      return;
    }
    const text = body.build();
    this.pp.macros.set(name, { name, params, body: text, sourced: true, pieces: pieces(text.text, params) });
  }

  private defineParams(): string[] | null {
    const open = this.here();
    this.adv();
    const params: string[] = [];
    this.skipBlanks();
    if (this.at() === ')') {
      this.adv();
      return params;
    }
    for (;;) {
      this.skipBlanks();
      const p = this.readName();
      this.skipBlanks();
      if (!p || (this.at() !== ',' && this.at() !== ')')) {
        this.err('LUNA-P014', 'bad #define parameter list', this.hereOr(open));
        return null;
      }
      params.push(p);
      const c = this.at();
      this.adv();
      if (c === ')') return params;
    }
  }

  // ----------------------------------------------------------------------------------- macros

  private macroUse(): void {
    const use = this.here();
    const active = this.top.activeAt(this.top.i);
    const level = this.top.level + 1;
    this.adv();
    const name = this.readName();
    const m = this.pp.macros.get(name);
    if (!m) {
      this.err('LUNA-P002', `undefined identifier: ${name}`, use);
      return;
    }
    let args: MappedText[] = [];
    if (m.params) {
      const got = this.macroArgs(name, use);
      if (!got) return;
      args = got;
      if (m.params.length === 0 && args.length === 1 && args[0]!.text.length === 0) args = [];
      if (args.length !== m.params.length) {
        this.err('LUNA-P013', `macro '${name}' expects ${m.params.length} argument(s), got ${args.length}`, use);
        return;
      }
    }
    for (let a = active; a; a = a.next) {
      if (a.macro === m) {
        this.err('LUNA-P016', `recursive expansion of macro '${name}'`, use);
        return;
      }
    }
    if (level > MAX_MACRO_NESTING || (active?.depth ?? 0) + 1 > MAX_MACRO_NESTING || this.frames.length > MAX_MACRO_NESTING) {
      this.err('LUNA-P019', `macro expansion nested too deep (more than ${MAX_MACRO_NESTING} levels): '${name}'`, use);
      return;
    }
    const frame = this.expand(m, args, use, active, level);
    if (!frame) return;
    this.frames.push(frame);
    this.top = frame;
    this.popRead(); // an empty expansion
  }

  /** Arguments of `$F(…)`: split on top-level `,`, end at the matching `)`, `\` escapes. */
  private macroArgs(name: string, use: number): MappedText[] | null {
    this.skipBlanks();
    if (this.at() !== '(') {
      this.err('LUNA-P013', `macro '${name}' needs an argument list`, use);
      return null;
    }
    this.adv();
    const args: MappedText[] = [];
    let cur = new MappedTextBuilder();
    let depth = 0;
    const take = (): void => {
      cur.appendFrom(this.top, this.top.i, this.top.i + 1);
      this.adv();
    };
    while (!this.eof) {
      const c = this.at();
      if (c === '\\' && this.at(1) !== undefined) {
        this.adv();
        take();
      } else if (c === '"') {
        take();
        while (!this.eof && this.at() !== '"') {
          if (this.at() === '\\') take();
          if (!this.eof) take();
        }
        if (!this.eof) take();
      } else if (c === '(') {
        depth++;
        take();
      } else if (c === ')' && depth > 0) {
        depth--;
        take();
      } else if ((c === ',' || c === ')') && depth === 0) {
        args.push(trim(cur.build()));
        cur = new MappedTextBuilder();
        this.adv();
        if (c === ')') return args;
      } else take();
    }
    this.err('LUNA-P013', `unterminated argument list of macro '${name}'`, use);
    return null;
  }

  /** The expansion of `m` as a frame to rescan; null when it would pass the size limit. */
  private expand(m: Macro, args: MappedText[], use: number, outer: Active | null, level: number): Frame | null {
    let size = 0;
    for (const p of m.pieces) size += typeof p === 'number' ? args[p]!.text.length : p.to - p.from;
    const pp = this.pp;
    pp.expanded += size;
    if (pp.expanded > pp.limit) {
      pp.overflow(this.outermostUseOr(use), this.file);
      return null;
    }
    // without arguments the expansion is the body itself (or, for -D, its text at the use)
    if (args.length === 0) {
      const map = m.sourced ? m.body.map : PosMap.constant(use);
      return new Frame(m.body.text, map, m, [], outer, use, level);
    }
    const b = new MappedTextBuilder();
    const ranges: number[] = [];
    for (const p of m.pieces) {
      if (typeof p === 'number') {
        const a = args[p]!;
        const start = b.length;
        b.appendFrom(a, 0, a.text.length);
        if (b.length > start) ranges.push(start, b.length);
      } else if (m.sourced) b.appendFrom(m.body, p.from, p.to);
      else b.appendConst(m.body.text.slice(p.from, p.to), use);
    }
    const t = b.build();
    return new Frame(t.text, t.map, m, ranges, outer, use, level);
  }

  private outermostUseOr(use: number): number {
    return this.frames.length > 1 ? this.frames[1]!.use : use;
  }

  // --------------------------------------------------------------------------- foreign blocks

  /** `${{ … $}}` or `${<TERM} … TERM`, cut out and replaced by ` __block(N) `. */
  private foreignBlock(): void {
    const at = this.here();
    const text = new MappedTextBuilder();
    if (this.at(2) === '{') {
      this.adv();
      this.adv();
      const open = this.here();
      this.adv();
      if (!this.collectUntil('$}}', text)) return this.unterminatedBlock(at, "'$}}'");
      // the block is `{` + inner + `}`; the braces map to those of `${{` and `$}}`
      const inner = text.build();
      this.adv(); // `$`
      const close = this.here(); // the `}` after it
      this.adv();
      this.adv();
      const whole = new MappedTextBuilder();
      whole.appendChar('{', open);
      whole.appendFrom(inner, 0, inner.text.length);
      whole.appendChar('}', close);
      this.recordBlock(whole.build(), at);
    } else if (this.at(2) === '<') {
      this.adv();
      this.adv();
      this.adv();
      let term = '';
      while (!this.eof && this.at() !== '}' && this.at() !== '\n') {
        term += this.at();
        this.adv();
      }
      if (this.at() !== '}' || term.length === 0) return this.unterminatedBlock(at, 'a terminator in ${<TERM}');
      this.adv();
      if (!this.collectUntil(term, text)) return this.unterminatedBlock(at, `'${term}'`);
      for (let k = 0; k < term.length; k++) this.adv();
      this.recordBlock(text.build(), at);
    } else {
      // a lone `${`: not a block; `$` reaches the parser, which rejects it
      this.take();
    }
  }

  /** Copy characters into `into` up to (not including) `needle`; false at end of file. */
  private collectUntil(needle: string, into: MappedTextBuilder): boolean {
    for (;;) {
      const f = this.top;
      if (this.frames.length === 1) {
        // the file itself: one search
        const k = f.text.indexOf(needle, f.i);
        if (k < 0) {
          f.i = f.text.length;
          return false;
        }
        into.appendFrom(f, f.i, k);
        f.i = k;
        return true;
      }
      let hit = true;
      for (let j = 0; j < needle.length && hit; j++) hit = this.at(j) === needle[j];
      if (hit) return true;
      into.appendFrom(f, f.i, f.i + 1);
      this.adv();
    }
  }

  private recordBlock(t: MappedText, at: number): void {
    if (this.skipping) return;
    const index = this.pp.blocks.length;
    const first = t.text.length > 0 ? t.map.posAt(0) : at;
    this.pp.blocks.push({ index, text: t.text, origin: this.origin(first), map: t.map });
    // the inserted text maps to the `$` that opened the block
    this.pp.out.appendConst(` __block(${index}) `, at);
  }

  private unterminatedBlock(at: number, what: string): void {
    if (!this.skipping) this.err('LUNA-P005', `unterminated foreign block: expected ${what}`, at);
    // nothing after an unterminated block is read, in this file or the expansions above it
    for (const f of this.frames) f.i = f.text.length;
    this.popRead();
  }
}

/** Split a macro body at its `$param` references (not inside strings). */
function pieces(body: string, params: string[] | null): Macro['pieces'] {
  const out: Macro['pieces'] = [];
  let lit = 0;
  let inString = false;
  for (let k = 0; k < body.length; k++) {
    const c = body[k]!;
    if (c === '"') inString = !inString;
    else if (inString && c === '\\' && k + 1 < body.length) k++;
    else if (!inString && c === '$' && params && isWordStart(body[k + 1])) {
      let e = k + 1;
      while (isWord(body[e])) e++;
      const idx = params.indexOf(body.slice(k + 1, e));
      if (idx >= 0) {
        if (k > lit) out.push({ from: lit, to: k });
        out.push(idx);
        lit = e;
        k = e - 1;
      }
    }
  }
  if (body.length > lit) out.push({ from: lit, to: body.length });
  return out;
}

function trim(a: MappedText): MappedText {
  let s = 0, e = a.text.length;
  while (s < e && isSpace(a.text[s]!)) s++;
  while (e > s && isSpace(a.text[e - 1]!)) e--;
  if (s === 0 && e === a.text.length) return a;
  const b = new MappedTextBuilder();
  b.appendFrom(a, s, e);
  return b.build();
}

/** Preprocess `file` (docs/language.md §2). Never throws: problems come back as diagnostics. */
export function preprocess(file: string, opts: PreprocessOptions = {}): { pre: Preprocessed; diagnostics: Diagnostic[] } {
  const pp = new Preprocessor(opts);
  pp.run(file);
  const { text, map } = pp.out.build();
  const pre: Preprocessed = { text, map, sources: pp.sources, blocks: pp.blocks, files: pp.files };
  return { pre, diagnostics: pp.sink.result() };
}

/** Preprocess source text held in memory (tests, tools); includes resolve through `opts`. */
export function preprocessText(
  file: string,
  text: string,
  opts: PreprocessOptions = {},
): { pre: Preprocessed; diagnostics: Diagnostic[] } {
  const read = opts.readFile ?? ((p: string) => readRegular(p, 'source file'));
  return preprocess(file, { ...opts, readFile: (p) => (p === file ? text : read(p)) });
}
