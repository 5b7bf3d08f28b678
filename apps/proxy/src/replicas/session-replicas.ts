import type { WriteFence } from "@geo/pool";
import type { Leg } from "../executor/leg.js";

/**
 * What one session knows for read-your-writes, region by region.
 *
 * A write is noted when it is sent, with the connection that carries it. The fence cannot be taken
 * then: it must be taken after the write committed, or the probe it waits for could read a position
 * before the commit record. So the region stays on the primary while the note is pending, and the
 * first read there after the write's transaction ended takes the fence
 * (`HealthMonitor.writeFence`). From then on the region's reads go to the primary until a replica
 * has replayed past the fence's position. Taking it later than the commit is safe: a later fence
 * only has a later position.
 */
export class SessionReplicas {
  /** Regions written whose fence is not taken yet, with the connection that wrote (null: already ended). */
  private readonly pendingWrites = new Map<string, Leg | null>();
  /** The latest fence per region; a later one always has a later position. */
  private readonly fences = new Map<string, WriteFence>();

  /** A write was sent to `region` on `leg` (null: a write that has already ended, committed or not). */
  noteWrite(region: string, leg: Leg | null): void {
    this.pendingWrites.set(region, leg);
  }

  /** The write noted in `region` and not yet fenced, if any. */
  pendingWrite(region: string): Leg | null | undefined {
    return this.pendingWrites.get(region);
  }

  /** The write in `region` ended: from now on its fence keeps reads off replicas that lack it. */
  fence(region: string, fence: WriteFence): void {
    this.pendingWrites.delete(region);
    this.fences.set(region, fence);
  }

  fenceOf(region: string): WriteFence | undefined {
    return this.fences.get(region);
  }
}
