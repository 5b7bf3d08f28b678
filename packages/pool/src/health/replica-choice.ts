import type { BackendHealth } from "./backend-health.js";
import type { WriteFence } from "./write-fence.js";

/** What a read asks of a replica. */
export interface ReplicaChoiceOptions {
  /** The region's `max_replica_lag_bytes`: a replica further behind serves no reads. */
  readonly maxLagBytes: bigint | number;
  /** The replica must have replayed at least this far. */
  readonly minLsn?: bigint | undefined;
  /**
   * The session's latest write in the region. While unresolved no replica qualifies (the read goes
   * to the primary); once resolved the replica must have replayed up to its position.
   */
  readonly fence?: WriteFence | undefined;
}

/** Why a replica was passed over. */
export const ReplicaRefusal = {
  notUp: "not-up",
  drained: "drained",
  notInRecovery: "not-in-recovery",
  primaryDown: "primary-down",
  lagUnknown: "lag-unknown",
  tooFarBehind: "too-far-behind",
  writeNotYetProbed: "write-not-yet-probed",
  behindWrite: "behind-write",
} as const;
export type ReplicaRefusal = (typeof ReplicaRefusal)[keyof typeof ReplicaRefusal];

/** `explainReplicaChoice`'s answer, for ROUTE and logs. */
export interface ReplicaChoice {
  readonly chosen: BackendHealth | undefined;
  readonly replicas: readonly { readonly address: string; readonly refusal: ReplicaRefusal | undefined }[];
}
