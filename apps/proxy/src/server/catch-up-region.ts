import type { RunningStoreClaim } from "../directory/open-store-claim.js";
import type { TxnService } from "../distributed/txn-service.js";
import type { Moves } from "../moves/moves.js";
import type { SequenceIds } from "./sequence-ids.js";

/** What a region's start-up work runs with. */
export interface CatchUpParts {
  readonly txn: TxnService;
  readonly claim?: RunningStoreClaim | undefined;
  readonly moves?: Moves | undefined;
  readonly sequenceIds: SequenceIds;
  readonly timeoutMs: number;
}

/**
 * What a region down at start missed, run once it answers: the node and directory claims there,
 * recovery of what a previous run left prepared there, with `[directory_store]` its directory
 * table, and the check of its sequences' ids. Throws, to be retried, while it fails.
 */
export async function catchUpRegion(region: string, parts: CatchUpParts): Promise<void> {
  const { txn, claim, moves } = parts;
  // Claimed first: nothing is recovered there, for statements or moves, without the claim.
  const claimed = await txn.claim.take(region);
  if (claimed.state !== "held") throw claimed.error;
  await claim?.take(region);
  await moves?.regionReachable(region);
  const report = await txn.recoverNow();
  const failed = report?.failures.find((failure) => failure.region === region);
  if (failed !== undefined) throw failed.error;
  await parts.sequenceIds.check([region], parts.timeoutMs);
}
