// `block` parameters: a mutable block a CF holds for its duration (docs/language.md §4.3.2).
// The argument is an ordinary DF whose value — set once, like any DF — is a handle naming the
// block: `{ block: kind, id }`. The executor asks the layer that registered `kind` on this
// thread to hold it before the ucode runs (the layer may wait for it through the request port)
// and releases it when the ucode returns or throws; the ucode gets the layer's view of it.
//
// The registry is kept on globalThis: worker threads run a bundled copy of the runtime, and a
// layer's module, imported separately, must reach the same registry.
import type { UcodeContext } from '../../ucode/context.js';
import { T_JS, TYPE_NAMES, type DfValue } from '../../ucode/value.js';
import { UcodeError } from '../../ucode/df.js';
import { ContractError } from './contract.js';

/** What a `block` argument's DF holds. */
export interface BlockHandle {
  /** the kind of block: the layer that registered it (e.g. a dynamic array) */
  block: string;
  /** which block of that kind */
  id: string | number;
}

/** A block held by a running CF. */
export interface HeldBlock {
  /** what the ucode receives (a C++ ucode sees `bytes`, the block's memory, when it has them) */
  readonly view: object & { bytes?: Uint8Array };
  /** the CF ended: give the block back */
  release(): void;
}

/** What a layer registers for its kind of block, on every thread that runs ucodes. */
export interface BlockKind {
  /** Hold block `h` for the CF `ctx` runs (waiting for it, through ctx.request, if it must). */
  hold(h: BlockHandle, ctx: UcodeContext): HeldBlock;
}

const KEY = Symbol.for('luna-ts.exec.blockKinds');
const kinds: Map<string, BlockKind> = ((globalThis as { [KEY]?: Map<string, BlockKind> })[KEY] ??= new Map());

/** Register `kind` on this thread (a layer's worker module does it when imported). */
export function registerBlockKind(name: string, kind: BlockKind): void {
  const had = kinds.get(name);
  if (had !== undefined && had !== kind) throw new Error(`two layers register blocks of kind '${name}'`);
  kinds.set(name, kind);
}

/** A handle, as a DF value holds it (a layer's ucode sets it with setValue). */
export function isBlockHandle(v: unknown): v is BlockHandle {
  if (typeof v !== 'object' || v === null) return false;
  const h = v as Partial<BlockHandle>;
  return typeof h.block === 'string' && (typeof h.id === 'string' || typeof h.id === 'number');
}

/** A block held by the call in progress, and which one it is. */
export interface Holding { key: string; block: HeldBlock }

/**
 * Hold the block of `value` (the DF named `dfName()`) for the call in progress; `held`
 * collects it for the release. Its view is what the ucode gets.
 */
export function holdBlock(value: DfValue, dfName: () => string, ctx: UcodeContext, held: Holding[]): HeldBlock['view'] {
  if (value.t !== T_JS || !isBlockHandle(value.v)) {
    throw new UcodeError(`DF ${dfName()} is passed as a block but holds ${value.t === T_JS ? 'a JavaScript value that is no block handle' : TYPE_NAMES[value.t]}: a block parameter takes a DF that a layer set to a block handle ({ block, id })`);
  }
  const h = value.v;
  const kind = kinds.get(h.block);
  if (kind === undefined) throw new ContractError(`no layer provides blocks of kind '${h.block}' (DF ${dfName()}) on this thread`);
  const key = `${h.block}\u0000${h.id}`;
  if (held.some((o) => o.key === key)) throw new UcodeError(`DF ${dfName()} names a block this CF already holds (${h.block} ${h.id}): it would wait for itself`);
  const block = kind.hold(h, ctx);
  held.push({ key, block });
  return block.view;
}
