import type { PoolStats } from "@geo/pool";

/**
 * One backend pool's figures with the region and the role of the server it connects to: what the
 * primary and replica pool sets report, and what SHOW POOLS and /metrics read. It lives apart from
 * both producers and from the console, so that none of them imports another for a type.
 */
export interface RegionPoolStats extends PoolStats {
  readonly region: string;
  /** "primary" or "replica". */
  readonly role: string;
}
