// The ucode API, as `luna-ts/ucode`: the DF handle, and the context of the running ucode.
export { DF, UcodeError, type DfReader, type DfWriter } from './df.js';
export { context, RequestFailed, type UcodeContext } from './context.js';
export { DdaBlock, dynamicArray, blockOf, rearrange, globalCount, type DdaHandle, type DdaSpec, type DefragOrder, type RearrangeOptions } from './dda.js';
