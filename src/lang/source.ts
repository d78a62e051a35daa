// Preprocessed text with a map from every character back to its origin (LANGUAGE.md §2 `.ti`).

export interface Origin {
  file: string;
  /** 1-based; 0 when the character was inserted by the preprocessor */
  line: number;
  /** 1-based */
  col: number;
}

export interface ForeignBlock {
  index: number;
  /** raw text of the block (`{` + inner + `}` for the `${{ … $}}` form) */
  text: string;
  /** origin of the block's first character */
  origin: Origin;
  /** origin of every character of `text` (luna-ts addition, for errors inside the block) */
  origins?: Origin[];
}

export interface Preprocessed {
  /** the preprocessed program text (foreign blocks replaced by ` __block(N) `) */
  text: string;
  /** origin of every character of `text` (same length as text) */
  origins: Origin[];
  blocks: ForeignBlock[];
  /** all source files read, main file first */
  files: string[];
}
