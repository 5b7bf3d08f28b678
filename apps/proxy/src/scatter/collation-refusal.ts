import type { ScatterPlan } from "@geo/core";
import type { PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import { type ComparedColumn, checkCollations } from "./collation-check.js";
import type { RegionConnection } from "./region-connections.js";
import type { StatementShape } from "./region-statement.js";
import { StaleShape } from "./stale-shape.js";

// Statements spanning regions whose databases order text differently: refused before a wrong
// order or a wrong row set reaches the client (docs/scatter-gather.md).

/**
 * Refused when a region's database orders text by another default collation than home's
 * (docs/scatter-gather.md), from what is known now: asked before the statement's connections are
 * taken, so a refusal in the steady state costs none, and again once they are open.
 */
export function collationRefusal(session: SessionPort, regions: readonly string[]): PgError | null {
  const pools = session.runtime.pools;
  return session.runtime.collations.refusal(
    regions,
    (region) => pools.keyOf(region, session.user, session.database).database,
  );
}

/**
 * A statement spanning `regions` (a write as well as a read): refused when one of their databases
 * orders text otherwise than home's, after reading what was never read. Each region's part of a
 * write compares text (WHERE name > 'm', ON CONFLICT, a sub-query) by its own default, so the rows
 * written would not be the ones one server would pick.
 */
export async function collationRefusalFor(
  session: SessionPort,
  regions: readonly string[],
): Promise<PgError | null> {
  const all = [session.runtime.router.topology.home.id, ...regions];
  await readCollations(session, all);
  return collationRefusal(session, all);
}

/**
 * Reads the collation of each region's database this client's statement uses that was never read
 * or whose server may have changed since (a region that came back): on a pooled connection, so a
 * refusal lifts as soon as the region's database matches again, whatever else ran there.
 */
export async function readCollations(session: SessionPort, regions: readonly string[]): Promise<void> {
  const { pools, collations } = session.runtime;
  for (const region of new Set(regions)) {
    const database = pools.keyOf(region, session.user, session.database).database;
    // A pooled connection its server already ended (it went away, its database was dropped) may
    // be met first; it is discarded and one more is tried.
    for (let attempt = 0; attempt < 2 && collations.needsRead(region, database); attempt++) {
      // A region that cannot be reached is left to the statement's own connection, which fails
      // as a read spanning regions fails for it; until then what was read last stands. Inside a
      // block only an idle connection is taken: waiting for one while the block holds others
      // could stall it, and a connection the block opens in that region is read as it opens.
      const lease =
        pools.tryAcquire(region, session.user, session.database) ??
        (session.txn === null
          ? await pools.acquire(region, session.user, session.database).catch(() => null)
          : null);
      if (lease === null) break;
      try {
        await collations.readOn(lease.connection, pools.connectTimeoutOf(region)).catch(() => undefined);
      } finally {
        if (lease.connection.usable) lease.release();
        else lease.discard("broken while its collation was read");
      }
    }
  }
}

/**
 * The home finish compares what it sorts, groups or joins in the home database's default
 * collation: refused when that is not the compared columns' own. An ordered plan compares only its
 * sort keys; the other tiers may compare any shipped column.
 */
export async function checkShippedCollations(
  session: SessionPort,
  plan: ScatterPlan,
  analysis: Analysis,
  sqls: readonly string[],
  shapes: readonly StatementShape[],
  describedBy: readonly string[],
  connections: readonly RegionConnection[],
): Promise<void> {
  const merge = plan.merge;
  const checks: { sql: string; compared: ComparedColumn[] }[] = [];
  switch (merge.tier) {
    case "ordered": {
      const hidden = (shapes[sqls.indexOf(merge.regionSql)]?.fields ?? []).slice(-merge.hiddenColumns);
      checks.push({
        sql: merge.regionSql,
        compared: hidden.map((field, i) => ({
          field,
          explicitCollation: merge.sortKeys[i]?.collation !== undefined,
        })),
      });
      break;
    }
    case "partial-aggregate":
      checks.push({ sql: merge.regionSql, compared: allFields(shapes[sqls.indexOf(merge.regionSql)]) });
      break;
    case "gather":
      for (const spec of merge.sources)
        checks.push({ sql: spec.regionSql, compared: allFields(shapes[sqls.indexOf(spec.regionSql)]) });
      break;
    case "concat":
      return;
  }
  for (const { sql, compared } of checks) {
    const region = describedBy[sqls.indexOf(sql)];
    const connection = connections.find((c) => c.region === region);
    // Shapes cached by another plan of the same text: describe again, on regions open now.
    if (region === undefined || connection === undefined) throw new StaleShape(region ?? plan.home);
    await checkCollations(session.runtime, connection.channel, compared, analysis.tables);
  }
}

function allFields(shape: StatementShape | undefined): ComparedColumn[] {
  return (shape?.fields ?? []).map((field) => ({ field, explicitCollation: false }));
}
