// Errors of the executors themselves rather than of a ucode's own code.

/** A ucode broke the contract of the runtime (not an exception it threw). */
export class ContractError extends Error {}

/** The run failed while a ucode waited for its node: the ucode unwinds, its CF is dropped. */
export class RunAborted extends Error {
  constructor() { super('the run was aborted while this ucode waited for its node'); }
}
