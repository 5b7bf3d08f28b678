import type { ReadFinish } from "@geo/admin";
import type { ScatterPlan } from "@geo/core";
import { type FieldDescription, type FormatCode, Messages, PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { checkShippedCollations, collationRefusal, readCollations } from "./collation-refusal.js";
import { refuseShippingResident, resultFormatsMismatch } from "./errors.js";
import { limitWindow } from "./limit-window.js";
import { Concatenation, OrderedMerge } from "./ordered-merge.js";
import type { RegionChannel } from "./region-channel.js";
import { openRegions, type RegionConnection } from "./region-connections.js";
import { type BoundParams, describeStatement, RegionRows, type StatementShape } from "./region-statement.js";
import { type RowSource, windowed } from "./row-source.js";
import { cachedShapes, forgetShapes, rememberShapes, type ScatterShapes, shapeKey } from "./shape-cache.js";
import { Shipment, ShipmentBudget } from "./shipment.js";
import { mergeKeys } from "./sort-keys.js";
import { StaleShape } from "./stale-shape.js";
import { type ShippedType, shippedTypes, typeNames } from "./type-names.js";

/** One execution of a scatter read: the statement, its plan, the client's parameters and formats. */
export interface ScatterRequest {
  readonly analysis: Analysis;
  readonly plan: ScatterPlan;
  readonly params: BoundParams;
  /** Result format codes as the client bound them (none: text; one: every column; else per column). */
  readonly resultFormats: readonly FormatCode[];
}

/** The combined answer: the RowDescription one PostgreSQL would send, and the rows in order. */
export interface ScatterAnswer {
  readonly fields: readonly FieldDescription[] | null;
  readonly rows: RowSource;
  /** How the answer is finished, as the metrics count reads over several regions. */
  readonly finish: ReadFinish;
}

/** A statement one region runs: for a gather, one per shipped table (`source`) and region. */
interface RegionJob {
  readonly region: string;
  readonly sql: string;
  readonly source: number;
}

export function formatOf(codes: readonly FormatCode[], column: number): FormatCode {
  if (codes.length === 0) return 0;
  if (codes.length === 1) return codes[0]!;
  return codes[column] ?? 0;
}

function jobsOf(plan: ScatterPlan): RegionJob[] {
  const merge = plan.merge;
  if (merge.tier !== "gather")
    return plan.statements.map((s) => ({ region: s.region, sql: s.sql, source: 0 }));
  const jobs: RegionJob[] = [];
  for (const [source, spec] of merge.sources.entries()) {
    const regions = plan.gatherSources?.find((g) => g.table === spec.table)?.regions ?? plan.regions;
    for (const region of regions) jobs.push({ region, sql: spec.regionSql, source });
  }
  return jobs;
}

function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

/**
 * Runs `tasks` (one per region) together. At the first failure the other regions are cancelled;
 * once all have stopped the first failure is thrown, so no region is left reading.
 */
async function allOrCancel<T>(
  channels: readonly RegionChannel[],
  tasks: readonly Promise<T>[],
): Promise<T[]> {
  let failure: unknown = null;
  const settled = await Promise.allSettled(
    tasks.map((task) =>
      task.catch((error: unknown) => {
        if (failure === null) {
          failure = error;
          // A stale description is no failure of the statement: the others finish and are read.
          if (!(error instanceof StaleShape)) for (const channel of channels) channel.cancel();
        }
        throw error;
      }),
    ),
  );
  if (failure !== null) throw failure;
  return settled.map((result) => (result as PromiseFulfilledResult<T>).value);
}

/** Ends every region's part: drained, or cancelled after a failure; then the connections go back. */
async function closeAll(connections: readonly RegionConnection[], failed: boolean): Promise<void> {
  await Promise.all(
    connections.map(async (connection) => {
      const channel = connection.channel;
      if (failed) channel.cancel();
      if (channel.open) channel.sync(Messages.sync);
      await channel.settle();
      connection.release();
    }),
  );
}

/**
 * Opens the regions' connections, asks PostgreSQL for the client statement's own shape (or takes
 * it from the cache), and starts the tier's combination. Throws the first error (a region's, or a
 * refusal) with every connection already given back.
 */
export async function openScatter(
  session: SessionPort,
  request: ScatterRequest,
  mode: StatementMode,
): Promise<ScatterAnswer> {
  const key = shapeKey(session, request.analysis.text, request.params.types);
  try {
    return await openScatterWith(session, request, mode, key, cachedShapes(session.runtime, key));
  } catch (error) {
    if (!(error instanceof StaleShape)) throw error;
    forgetShapes(session.runtime, key);
    return openScatterWith(session, request, mode, key, undefined);
  }
}

async function openScatterWith(
  session: SessionPort,
  request: ScatterRequest,
  mode: StatementMode,
  key: string,
  cached: ScatterShapes | undefined,
): Promise<ScatterAnswer> {
  const { plan, analysis } = request;
  const merge = plan.merge;
  if (!plan.homeFinishAllowed && merge.movesRowData && merge.tier !== "ordered") {
    throw refuseShippingResident(
      plan.regions.filter((r) => r !== plan.home),
      plan.home,
    );
  }
  const jobs = jobsOf(plan);
  const needsHome = merge.tier === "partial-aggregate" || merge.tier === "gather";
  const regions = unique([...jobs.map((job) => job.region), ...(needsHome ? [plan.home] : [])]);
  await readCollations(session, [plan.home, ...plan.regions, ...regions]);
  const differs = collationRefusal(session, [...plan.regions, ...regions]);
  if (differs !== null) throw differs;
  const connections = await openRegions(session, regions, mode);
  // A CancelRequest reaches every region still answering; cancelled connections are never pooled.
  const cancel = (): void => {
    for (const connection of connections) connection.channel.cancel();
  };
  session.cancelHooks.add(cancel);
  const channelOf = (region: string): RegionChannel => connections.find((c) => c.region === region)!.channel;
  try {
    // A region's first connection, or its first since it came back, read its collation as it opened.
    const differsNow = collationRefusal(session, [...plan.regions, ...regions]);
    if (differsNow !== null) throw differsNow;
    const sqls = unique(jobs.map((job) => job.sql));
    const describeOn = (i: number) => connections[i % connections.length]!.channel;
    // The client's own statement gives the parameter types every rewrite must use: with
    // parameters it is described first, without them everything is described at once.
    const rewrites = (types: readonly number[]) =>
      sqls.map((sql, i) => ({ channel: describeOn(i + 1), sql, types }));
    let original: StatementShape;
    let shapes: readonly StatementShape[];
    let describedBy: readonly string[];
    if (cached !== undefined) {
      original = cached.original;
      shapes = cached.rewrites;
      describedBy = cached.describedBy;
    } else {
      describedBy = sqls.map((_, i) => describeOn(i + 1).region);
      if (request.params.values.length === 0) {
        [original, ...shapes] = (await describeAll([
          { channel: describeOn(0), sql: analysis.text, types: [] },
          ...rewrites([]),
        ])) as [StatementShape, ...StatementShape[]];
      } else {
        original = await describeStatement(describeOn(0), analysis.text, request.params.types);
        shapes = await describeAll(rewrites(original.paramTypes));
      }
      rememberShapes(session.runtime, key, { original, rewrites: shapes, describedBy });
    }
    /** What a region statement must answer with when the shapes came from the cache. */
    const expect = (sql: string) => (cached === undefined ? null : shapeOf(sql).fields);
    checkResultFormats(request.resultFormats, original);
    const params: BoundParams = { ...request.params, types: original.paramTypes };
    const shapeOf = (sql: string): StatementShape => shapes[sqls.indexOf(sql)]!;
    const fields =
      original.fields?.map((field, i) => ({ ...field, format: formatOf(request.resultFormats, i) })) ?? null;
    const visibleFormats = (fields ?? []).map((field) => field.format);
    const done = (rows: RowSource, finish: ReadFinish = "merged_in_proxy"): ScatterAnswer => ({
      fields,
      rows,
      finish,
    });
    const source = (next: () => Promise<Buffer | null>): RowSource => ({
      next,
      close: (failed) => {
        session.cancelHooks.delete(cancel);
        return closeAll(connections, failed);
      },
    });

    switch (merge.tier) {
      case "concat": {
        const streams = await allOrCancel(
          connections.map((c) => c.channel),
          jobs.map((job) =>
            RegionRows.start(channelOf(job.region), job.sql, params, visibleFormats, true, expect(job.sql)),
          ),
        );
        const concat = new Concatenation(streams);
        return done(
          windowed(
            source(() => concat.next()),
            limitWindow(merge.limit, params),
          ),
        );
      }
      case "ordered": {
        const shape = shapeOf(merge.regionSql);
        const hiddenOids = (shape.fields ?? []).slice(-merge.hiddenColumns).map((field) => field.typeOid);
        const keys = mergeKeys(merge.sortKeys, hiddenOids);
        if (keys !== null) {
          const formats: FormatCode[] = [...visibleFormats, ...hiddenOids.map(() => 1 as const)];
          const streams = await allOrCancel(
            connections.map((c) => c.channel),
            jobs.map((job) =>
              RegionRows.start(channelOf(job.region), job.sql, params, formats, true, expect(job.sql)),
            ),
          );
          const ordered = new OrderedMerge(streams, keys, merge.hiddenColumns);
          return done(
            windowed(
              source(() => ordered.next()),
              limitWindow(merge.limit, params),
            ),
          );
        }
        if (!plan.homeFinishAllowed)
          throw refuseShippingResident(
            plan.regions.filter((r) => r !== plan.home),
            plan.home,
          );
        break;
      }
      case "partial-aggregate":
      case "gather":
        break;
    }

    // Home finish: the regions' rows (or partials) travel home as typed arrays; PostgreSQL finishes.
    await checkShippedCollations(
      session,
      request.plan,
      request.analysis,
      sqls,
      shapes,
      describedBy,
      connections,
    );
    // Each shape's type OIDs are named by the region that described it: the OIDs of types created
    // by users differ from server to server (another region may not know it, or mean another type).
    const shipped = (merge.tier === "gather" ? merge.sources.map((s) => s.regionSql) : [merge.regionSql]).map(
      (sql) => ({
        fields: shapeOf(sql).fields ?? [],
        region: describedBy[sqls.indexOf(sql)]!,
      }),
    );
    // One lookup per region at most, all at once: a channel is read by one reader at a time.
    const typesByRegion = new Map<string, { types: ShippedType[]; names: string[] }>();
    for (const { fields: shapeFields, region } of shipped) {
      const known = typesByRegion.get(region) ?? { types: [], names: [] };
      known.types.push(...shippedTypes(shapeFields));
      known.names.push(...shapeFields.map((f) => f.name));
      typesByRegion.set(region, known);
    }
    await Promise.all(
      [...typesByRegion].map(([region, { types, names }]) =>
        typeNames(session.runtime, channelOf(region), types, names),
      ),
    );
    const shipments: Shipment[] = [];
    for (const { fields: shapeFields, region } of shipped) {
      const names = await typeNames(
        session.runtime,
        channelOf(region),
        shippedTypes(shapeFields),
        shapeFields.map((f) => f.name),
      );
      shipments.push(new Shipment(shapeFields, names));
    }
    const limits = plan.gatherLimits ?? session.runtime.config.gather;
    const budget = new ShipmentBudget(limits, unique(jobs.map((job) => job.region)));
    const byRegion = unique(jobs.map((job) => job.region));
    await allOrCancel(
      connections.map((c) => c.channel),
      byRegion.map(async (region) => {
        const mine = jobs.filter((job) => job.region === region);
        for (const [i, job] of mine.entries()) {
          const shipment = shipments[job.source]!;
          const rows = await RegionRows.start(
            channelOf(region),
            job.sql,
            params,
            shipment.formats,
            i === mine.length - 1,
            expect(job.sql),
          );
          await shipment.take(rows, budget);
        }
      }),
    );
    let finishSql: string;
    switch (merge.tier) {
      case "gather":
        finishSql = merge.render(
          shipments.map((shipment, i) => ({
            table: merge.sources[i]!.table,
            columns: shipment.fields.map((field, c) => ({
              name: field.name,
              type: shipment.typeNames[c] ?? "text",
            })),
          })),
        );
        break;
      case "partial-aggregate":
        finishSql = merge.homeFinish.render(shipments[0]!.typeNames);
        break;
      case "ordered":
        finishSql = merge.homeFinish.render(
          shipments[0]!.typeNames,
          (fields ?? []).map((field) => field.name),
        );
        break;
      default:
        throw new PgError({ code: "XX000", message: "no home finish for this tier" });
    }
    let home = connections.find((c) => c.region === plan.home);
    if (home === undefined) {
      const [opened] = await openRegions(session, [plan.home], mode);
      connections.push(opened!);
      home = opened!;
      const homeDiffers = collationRefusal(session, plan.regions);
      if (homeDiffers !== null) throw homeDiffers;
    }
    const arrays = shipments.flatMap((shipment) => shipment.arrays);
    const finishParams: BoundParams = {
      types: [...params.types, ...arrays.map(() => 0)],
      formats: [...params.formats, ...arrays.map((array) => array.format)],
      values: [...params.values, ...arrays.map((array) => array.encode())],
    };
    const rows = await RegionRows.start(home.channel, finishSql, finishParams, visibleFormats, true);
    return done(
      source(() => rows.next()),
      merge.tier === "gather" ? "gathered" : "finished_in_home",
    );
  } catch (error) {
    session.cancelHooks.delete(cancel);
    await closeAll(connections, !(error instanceof StaleShape));
    throw error;
  }
}

/** PostgreSQL refuses a Bind whose result formats are neither none, one, nor one per column. */
export function checkResultFormats(codes: readonly FormatCode[], shape: StatementShape): void {
  const columns = shape.fields?.length ?? 0;
  if (codes.length <= 1 || codes.length === columns) return;
  throw resultFormatsMismatch(codes.length, columns);
}

async function describeAll(
  requests: readonly { channel: RegionChannel; sql: string; types: readonly number[] }[],
): Promise<StatementShape[]> {
  const results: StatementShape[] = new Array(requests.length);
  const channels = unique(requests.map((r) => r.channel));
  await allOrCancel(
    channels,
    channels.map(async (channel) => {
      for (const [i, request] of requests.entries()) {
        if (request.channel !== channel) continue;
        results[i] = await describeStatement(channel, request.sql, request.types);
      }
    }),
  );
  return results;
}
