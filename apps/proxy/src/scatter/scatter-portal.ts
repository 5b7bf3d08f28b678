import type { ScatterPlan } from "@geo/core";
import { type Bind, encodeCommandComplete, type FieldDescription, type FormatCode } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { rowDescriptionFrame, sendRows } from "./answer-writer.js";
import { resultTypeChanged } from "./errors.js";
import { PortalBuffer } from "./portal-buffer.js";
import { openRegions } from "./region-connections.js";
import { type BoundParams, describeStatement } from "./region-statement.js";
import type { RowSource } from "./row-source.js";
import { reportFailure } from "./run-scatter.js";
import { checkResultFormats, formatOf, openScatter } from "./scatter-read.js";
import { cachedShapes, shapeKey } from "./shape-cache.js";

const EXTENDED: StatementMode = { extended: true, final: false };

/** The client's Bind as the scatter passes it on: one format per parameter, values copied. */
export function boundParams(bind: Bind, clientTypes: readonly number[]): BoundParams {
  const count = bind.params.length;
  const formats: FormatCode[] = [];
  for (let i = 0; i < count; i++) formats.push(formatOf(bind.paramFormats, i));
  const types: number[] = [];
  for (let i = 0; i < count; i++) types.push(clientTypes[i] ?? 0);
  return {
    types,
    formats,
    values: bind.params.map((value) => (value === null ? null : Buffer.from(value))),
  };
}

/**
 * A portal whose statement spans regions (extended protocol). Bind only records it; Describe
 * asks a region for the client statement's shape; Execute runs the scatter. A row-limited
 * Execute sends its rows, then PortalSuspended, and keeps the rest for the next Execute.
 *
 * Parameters travel as the client bound them (text or binary), typed as PostgreSQL types them
 * in the client's own statement (its ParameterDescription): every region statement and the home
 * finish read `$n` with that type, so each value is read exactly as one PostgreSQL would read it.
 */
export class ScatterPortal {
  private rest: RowSource | null = null;
  private finished = false;
  /** The columns Describe sent the client (undefined: not described). */
  private described: readonly FieldDescription[] | null | undefined = undefined;

  constructor(
    readonly analysis: Analysis,
    readonly plan: ScatterPlan,
    readonly params: BoundParams,
    readonly resultFormats: readonly FormatCode[],
  ) {}

  async describe(session: SessionPort): Promise<void> {
    await session.quiesceActive();
    await session.relay.idle();
    let connections: Awaited<ReturnType<typeof openRegions>> = [];
    try {
      // Drivers describe every unnamed portal: the shape the last execution found answers without
      // a round trip to a region. Execute holds the rows to it (the columns must not change).
      let shape = cachedShapes(
        session.runtime,
        shapeKey(session, this.analysis.text, this.params.types),
      )?.original;
      if (shape === undefined) {
        connections = await openRegions(session, [this.plan.regions[0] ?? this.plan.home], EXTENDED);
        shape = await describeStatement(connections[0]!.channel, this.analysis.text, this.params.types);
      }
      checkResultFormats(this.resultFormats, shape);
      const fields =
        shape.fields?.map((field, i) => ({ ...field, format: formatOf(this.resultFormats, i) })) ?? null;
      this.described = shape.fields;
      session.relay.local({ bytes: rowDescriptionFrame(fields) });
    } catch (error) {
      reportFailure(session, error, EXTENDED);
    } finally {
      for (const connection of connections) connection.release();
    }
  }

  async execute(session: SessionPort, maxRows: number): Promise<void> {
    await session.quiesceActive();
    await session.relay.idle();
    const written = session.extended.batchWriteRegion;
    if (session.txn === null && written !== null) {
      // Outside a block the batch's write is not committed yet: a read elsewhere would miss it.
      const elsewhere = this.plan.regions.find((region) => region !== written) ?? written;
      reportFailure(session, session.extended.refuseAcross(written, elsewhere), EXTENDED);
      return;
    }
    if (this.finished) {
      session.relay.local({ bytes: encodeCommandComplete({ tag: "SELECT 0" }) });
      return;
    }
    try {
      if (this.rest !== null) {
        const outcome = await sendRows(session, this.rest, maxRows);
        if (outcome.kind === "complete") this.finish();
        return;
      }
      const answer = await openScatter(
        session,
        { analysis: this.analysis, plan: this.plan, params: this.params, resultFormats: this.resultFormats },
        EXTENDED,
      );
      if (this.described !== undefined && !sameColumnTypes(this.described, answer.fields)) {
        await answer.rows.close(false);
        throw resultTypeChanged();
      }
      let outcome: Awaited<ReturnType<typeof sendRows>>;
      try {
        outcome = await sendRows(session, answer.rows, maxRows);
      } catch (error) {
        await answer.rows.close(true);
        throw error;
      }
      if (outcome.kind === "complete") {
        await answer.rows.close(false);
        this.finish();
        session.runtime.observability.multiRegionRead(answer.finish);
        return;
      }
      const limits = this.plan.gatherLimits ?? session.runtime.config.gather;
      this.rest = await PortalBuffer.drain(answer.rows, limits, this.plan.regions);
      // Every row is in hand: the read was answered (the rest follows Execute by Execute).
      session.runtime.observability.multiRegionRead(answer.finish);
    } catch (error) {
      this.finish();
      reportFailure(session, error, EXTENDED);
    }
  }

  private finish(): void {
    this.finished = true;
    this.rest = null;
  }
}

function sameColumnTypes(
  described: readonly FieldDescription[] | null,
  answered: readonly FieldDescription[] | null,
): boolean {
  if (described === null || answered === null) return described === answered;
  return (
    described.length === answered.length &&
    described.every(
      (field, i) =>
        field.typeOid === answered[i]!.typeOid && field.typeModifier === answered[i]!.typeModifier,
    )
  );
}
