import type { GeoConfig, Topology } from "@geo/core";
import { encodeCommandComplete, encodeDataRow, PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import { restripeTable } from "../console/restripe.js";
import { textRowDescription } from "../console/text-row-description.js";
import type { RegionRunner } from "../directory/region-runner.js";
import type { StatementMode } from "../engine/statement-mode.js";
import type { Relay } from "../executor/relay.js";
import { notAnOperator } from "../moves/move-errors.js";
import type { SequenceIds } from "../server/sequence-ids.js";
import { restripe } from "./restripe.js";
import { restripeInTransaction } from "./restripe-errors.js";

/** The columns of RESTRIPE's answer: one row per sequence per region. */
export const RESTRIPE_COLUMNS = ["region", "column", "sequence", "increment", "start", "next"] as const;

/** What RESTRIPE runs with. */
export interface RestripeContext {
  readonly config: GeoConfig;
  readonly topology: Topology;
  readonly runner: RegionRunner;
  /** Read again afterwards, so SHOW ALERTS stops naming the sequences it fixed. */
  readonly sequenceIds: SequenceIds;
  readonly timeoutMs: number;
}

/** What RESTRIPE uses of the client's session. */
export interface RestripingSession {
  readonly user: string;
  readonly txn: object | null;
  readonly relay: Relay;
  readyForQuery(): Buffer;
  fail(error: PgError, mode: StatementMode): void;
}

/** One RESTRIPE at a time in this proxy: two would lock the same sequences in opposite orders. */
let running: Promise<unknown> = Promise.resolve();

/**
 * Runs RESTRIPE for a simple query; false when `analysis` is another statement. Operators only
 * (never under trust), never inside a transaction block.
 */
export async function runRestripeCommand(
  context: RestripeContext,
  session: RestripingSession,
  analysis: Analysis,
  mode: StatementMode,
): Promise<boolean> {
  if (analysis.console?.command !== "restripe") return false;
  const auth = context.config.auth;
  const refusal =
    auth.method === "trust" || !auth.operators.includes(session.user)
      ? notAnOperator("RESTRIPE", session.user, auth.method === "trust")
      : session.txn !== null
        ? restripeInTransaction()
        : restripeTable(analysis.console.argument, context.topology);
  if (refusal instanceof PgError) {
    session.fail(refusal, mode);
    return true;
  }
  const turn = running.then(() => restripe(context.topology, context.runner, refusal));
  running = turn.catch(() => undefined);
  const result = await turn;
  await context.sequenceIds.check(
    context.topology.regions.map((region) => region.id),
    context.timeoutMs,
  );
  if (result instanceof PgError) {
    session.fail(result, mode);
    return true;
  }
  const parts = [textRowDescription(RESTRIPE_COLUMNS)];
  for (const row of result)
    parts.push(
      encodeDataRow({
        values: [
          row.region,
          row.column,
          row.sequence,
          String(row.increment),
          String(row.start),
          String(row.next),
        ].map((value) => Buffer.from(value)),
      }),
    );
  parts.push(encodeCommandComplete({ tag: `RESTRIPE ${result.length}` }));
  session.relay.local({ bytes: Buffer.concat(parts) });
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
  return true;
}
