// The features of luna-ts that advice may name: command-line options and behaviour rules.
// Advice names them only through these tables, and a test checks every entry against the
// real `luna` help and docs/language.md, and every advice text against the entries — so
// advice cannot recommend something the tool does not offer.

/** `luna run` options */
export const OPTION = {
  threads: '--threads',
  nodes: '--nodes',
  prioritiesFrom: '--priorities-from',
  record: '--record',
  replay: '--replay',
  warmStart: '--warm-start',
  distribution: '--distribution',
} as const;

/** behaviour rules of the language (docs/language.md §4.4) */
export const RULE = {
  locatorCyclic: 'locator_cyclic',
  locatorReplicating: 'locator_replicating',
  stealable: 'stealable',
  priority: 'priority',
  heavy: 'heavy',
} as const;

/** `a` → "`a`": how advice quotes program names and features */
export const q = (s: string): string => `\`${s}\``;
