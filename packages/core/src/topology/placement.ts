import type { KeyType, RegionId } from "../config/types.js";
import type { Directory } from "../directory/directory.js";
import {
  type Hash64,
  hashInt8ExtendedParts,
  hashTextExtendedParts,
  unsignedModulo,
} from "../hash/pg-hash.js";
import type { Topology } from "./topology.js";

const INTEGER = /^[+-]?\d+$/;
const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;

/**
 * The directory's spelling of a key. Integer keys are written in canonical decimal so `007`, `+7`
 * and `7` are one key, as they are one value to PostgreSQL; text keys are taken as they are.
 */
export function canonicalKey(value: string, keyType: KeyType): string {
  if (keyType === "text") return value;
  const trimmed = value.trim();
  if (!INTEGER.test(trimmed)) return value;
  return BigInt(trimmed).toString();
}

/** PostgreSQL's hash of a key of the configured type: `hashtextextended(k, 0)` or `hashint8extended(k, 0)`. */
export function keyHash(key: string, keyType: KeyType): Hash64 {
  if (keyType === "integer") {
    const trimmed = key.trim();
    if (INTEGER.test(trimmed)) {
      const value = BigInt(trimmed);
      if (value >= INT8_MIN && value <= INT8_MAX) return hashInt8ExtendedParts(value);
    }
  }
  return hashTextExtendedParts(key);
}

/**
 * The shard of `shards` (sorted by region id) a key with no directory entry is created in:
 * the unsigned 64-bit hash modulo the number of shards. In SQL, for a text key:
 * `(hashtextextended(k, 0)::numeric + CASE WHEN hashtextextended(k, 0) < 0 THEN 2^64 ELSE 0 END) % n`.
 */
export function shardFor(key: string, keyType: KeyType, shards: readonly RegionId[]): RegionId {
  if (shards.length === 1) return shards[0]!;
  return shards[unsignedModulo(keyHash(key, keyType), shards.length)]!;
}

/**
 * Where the rows of `key` are, or would be created: its directory entry, or else the home
 * location's shard its hash picks. `key` must already be canonical (see `canonicalKey`).
 */
export function placeKey(key: string, keyType: KeyType, topology: Topology, directory: Directory): RegionId {
  return directory.lookup(key) ?? shardFor(key, keyType, topology.homeShards);
}
