import { BackendCode, encodeQuery, type PgError } from "@geo/proto";
import type { ProxyRuntime } from "../server/runtime.js";
import { allValues } from "./data-row.js";
import { errorOf, type RegionChannel } from "./region-channel.js";

/**
 * Type names the home statements cast their array parameters to, asked of the region that reported
 * the OID (types created by users have different OIDs from server to server) and kept per region.
 * PostgreSQL's `format_type` spelling, except for the two types whose unmodified SQL name means
 * length 1 (`character`, `bit`): those are named so that no length applies, or every shipped value
 * would be cut to one character.
 */
const TYPE_NAMES_SQL = `SELECT oid::int8, CASE oid
    WHEN 1042 THEN 'bpchar' WHEN 1014 THEN 'bpchar[]'
    WHEN 1560 THEN '"bit"' WHEN 1561 THEN '"bit"[]'
    ELSE format_type(oid, NULL) END
  FROM pg_catalog.pg_type WHERE oid IN ($OIDS)`;
const caches = new WeakMap<ProxyRuntime, Map<string, Map<number, string>>>();

export async function typeNames(
  runtime: ProxyRuntime,
  channel: RegionChannel,
  oids: readonly number[],
): Promise<string[]> {
  let byRegion = caches.get(runtime);
  if (byRegion === undefined) {
    byRegion = new Map();
    caches.set(runtime, byRegion);
  }
  let cache = byRegion.get(channel.region);
  if (cache === undefined) {
    cache = new Map();
    byRegion.set(channel.region, cache);
  }
  const missing = [...new Set(oids.filter((oid) => !cache.has(oid)))];
  if (missing.length > 0) {
    // Through the channel, after anything already written on it (the settings replay).
    channel.query(encodeQuery({ sql: TYPE_NAMES_SQL.replace("$OIDS", missing.join(", ")) }));
    let error: PgError | null = null;
    for (;;) {
      const message = await channel.next();
      if (message.code === BackendCode.ReadyForQuery) break;
      if (message.code === BackendCode.ErrorResponse) error ??= errorOf(message);
      if (message.code !== BackendCode.DataRow) continue;
      const [oid, name] = allValues(message.payload);
      if (oid != null && name != null) cache.set(Number(oid.toString("latin1")), name.toString("utf8"));
    }
    if (error !== null) throw error;
  }
  return oids.map((oid) => cache.get(oid) ?? "text");
}
