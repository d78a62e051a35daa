// The front end's result as plain data and back, for the compiled-program cache
// (program/front-cache.ts): the checked tree is plain objects already; the preprocessed text's
// position maps and source table are classes, stored as their fields (typed arrays as arrays)
// and rebuilt on the way back. The plain form is JSON's: a subtree that let substitution shares
// comes back as copies, which nothing after the front end tells apart.
import type { Program } from './ast.js';
import type { Diagnostic } from './diagnostics.js';
import { PosMap, SourceTable, type ForeignBlock, type Origin, type Preprocessed, type SourceUnit } from './source.js';

/** This module's file: luna's build, for the cache's key (a bundle's file, or tsc's output of the front end). */
export const FRONT_END_MODULE = import.meta.url;

interface StoredMap { starts: ArrayLike<number>; srcs: ArrayLike<number>; count: number }

export interface StoredFrontEnd {
  program: Program;
  diagnostics: Diagnostic[];
  text: string;
  map: StoredMap;
  units: SourceUnit[];
  blocks: { index: number; text: string; origin: Origin; map: StoredMap }[];
  files: string[];
}

const storedMap = (m: PosMap): StoredMap => ({ starts: Array.from(m.starts).slice(0, m.count), srcs: Array.from(m.srcs).slice(0, m.count), count: m.count });

function restoredMap(m: StoredMap): PosMap {
  if (!(m.count >= 0 && m.starts.length >= m.count && m.srcs.length >= m.count)) throw new Error('a stored position map is inconsistent');
  return new PosMap(m.starts, m.srcs, m.count);
}

/** A checked program (no errors) and what its diagnostics and origins need, as plain data. */
export function storedFrontEnd(pre: Preprocessed, program: Program, diagnostics: Diagnostic[]): StoredFrontEnd {
  return {
    program, diagnostics, text: pre.text, map: storedMap(pre.map), units: pre.sources.units, files: pre.files,
    blocks: pre.blocks.map((b) => ({ index: b.index, text: b.text, origin: b.origin, map: storedMap(b.map) })),
  };
}

/** The preprocessed text, program and diagnostics back from storedFrontEnd's data; throws when the data is not of that shape. */
export function restoredFrontEnd(s: StoredFrontEnd): { pre: Preprocessed; program: Program; diagnostics: Diagnostic[] } {
  if (typeof s !== 'object' || s === null || typeof s.text !== 'string' || !Array.isArray(s.program?.items) || !Array.isArray(s.diagnostics)
    || !Array.isArray(s.units) || !Array.isArray(s.blocks) || !Array.isArray(s.files)) throw new Error('not a stored front end');
  const blocks: ForeignBlock[] = s.blocks.map((b) => ({ index: b.index, text: b.text, origin: b.origin, map: restoredMap(b.map) }));
  const pre: Preprocessed = { text: s.text, map: restoredMap(s.map), sources: SourceTable.of(s.units), blocks, files: s.files };
  return { pre, program: s.program, diagnostics: s.diagnostics };
}
