// `luna-ts/spmd`: everything a program of the SPMD/PGAS layer imports (docs/spmd.md).
export {
  THREADS, MYTHREAD, SharedArray, get, put, memget, memput, memcpy, barrier, notify, wait,
  fence, region, holdNextExit, exitLateness, waitStats, Lock, allLockAlloc, lock, unlock, attempt, SpmdError, type AllocOptions, type ElemType,
} from './api.js';
export {
  allAlloc, broadcast, scatter, gather, gatherAll, exchange, permute, reduce, prefixReduce,
  IN_NOSYNC, IN_MYSYNC, IN_ALLSYNC, OUT_NOSYNC, OUT_MYSYNC, OUT_ALLSYNC, ALLSYNC, type ReduceOp,
} from './collectives.js';
