// Every channel a run's nodes talk on, in one list: a layer that talks across nodes adds its
// line here, so two layers can never pick the same id (the Router also refuses a second
// registration of an id, but only once both run).
export const CHANNEL = {
  /** CF migration and the DF protocol (data.ts); every message counted */
  data: 1,
  /** termination waves, faults, hang gathering, clock offsets (control.ts); none counted */
  control: 2,
  /** work stealing between idle and busy nodes (stealing.ts); none counted */
  steal: 3,
  /** the dynamic arrays' descriptors and migrated elements (dda/layer.ts); every message counted */
  dda: 4,
  /** the SPMD layer's rank counters, remote put/get and locks (spmd/host.ts); every message counted */
  spmd: 5,
} as const;

export type ChannelName = keyof typeof CHANNEL;
