import type { TablePolicy, Topology } from "@geo/core";
import { encodeCommandComplete, PgError } from "@geo/proto";
import { type Analysis, type CopyStatement, copyStatement } from "@geo/sql";
import { commitAcrossRegions, rollbackAll } from "../distributed/commit-across-regions.js";
import { copiesDiverged } from "../distributed/copy-errors.js";
import { runCollected, tagCount } from "../distributed/leg-statement.js";
import { runOn } from "../distributed/txn-service.js";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { inFailedTransaction, internalError } from "../errors/catalog.js";
import { noteWrite } from "../replicas/replica-read.js";
import type { Transaction } from "../session/transaction.js";
import { BINARY_KEY_TYPES, binaryKeyDecoder } from "./binary-key.js";
import { type BinaryKeyDecoder, BinaryRows } from "./binary-rows.js";
import { copyBinaryKeyType, copyTableUnreadable, copyWithoutKeyColumn } from "./copy-errors.js";
import { copyFormatSpec } from "./copy-format.js";
import { type CopyOutcome, CopySplit, type RowPlacement } from "./copy-split.js";
import { CsvLines } from "./csv-lines.js";
import { LineReader, TextLines } from "./line-reader.js";
import { RegionCopy } from "./region-copy.js";
import type { KeyField } from "./row-reader.js";
import { tableColumns } from "./table-columns.js";

/** Where the rows of a COPY FROM STDIN the proxy splits go. */
type Target =
  | { readonly kind: "by-key"; readonly key: string; readonly hinted: string | undefined }
  | { readonly kind: "everywhere" };

/**
 * COPY ... FROM STDIN whose rows belong in several regions: into a geo-partitioned table (each
 * row goes to its key's region) or into a replicated table without a writer (every row to every
 * copy). Returns false when the statement is not one of these (it is then routed as any other);
 * otherwise runs it and resolves once its answer is sent.
 *
 * Each region runs the client's own COPY statement on the session's connection there, inside
 * the session's block or an implicit one; the client's CopyData is cut into rows, and each row's
 * bytes go on, as the client sent them, to its region. CopyDone ends every region's COPY and the
 * regions commit together (two-phase when more than one got rows); a row that cannot be placed,
 * a region's own error, or the client's CopyFail rolls every region back.
 */
export async function runCopyFromStdin(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
): Promise<boolean> {
  const topology = session.runtime.router.topology;
  if (mode.extended || analysis.kind !== "copy" || topology.regions.length === 1) return false;
  let spec: CopyStatement | undefined;
  try {
    spec = copyStatement(analysis.text);
  } catch {
    return false;
  }
  if (spec === undefined || !spec.from || spec.target !== "stdio" || spec.table === undefined) return false;
  const policy = policyOf(topology, spec.table);
  let target: Target;
  if (policy?.placement === "geo_partitioned" && analysis.hints.key === undefined) {
    target = { kind: "by-key", key: policy.key, hinted: analysis.hints.region };
  } else if (
    policy?.placement === "global_replicated" &&
    policy.writer === undefined &&
    analysis.hints.region === undefined
  ) {
    target = { kind: "everywhere" };
  } else return false;
  await session.settle();
  await runSplit(session, analysis, spec, spec.table, target, mode);
  return true;
}

async function runSplit(
  session: SessionPort,
  analysis: Analysis,
  spec: CopyStatement,
  table: { readonly schema?: string; readonly name: string },
  target: Target,
  mode: StatementMode,
): Promise<void> {
  const runtime = session.runtime;
  const topology = runtime.router.topology;
  const name = table.schema === undefined ? table.name : `${table.schema}.${table.name}`;
  const format = copyFormatSpec(spec.options);
  const binary = format.format === "binary";
  const regions =
    target.kind === "by-key" && target.hinted !== undefined ? [target.hinted] : [...topology.regionIds];
  // Counted as what it is: one write spread over these regions.
  session.observed.routed({
    kind: "multi-region",
    plan: {
      kind: "distributed-write",
      regions,
      statements: regions.map((region) => ({ region, sql: analysis.text })),
      commit: "two-phase",
    },
  });

  // The key's position in each row: the column list, or the table's columns in table order.
  let keyField: KeyField | null = null;
  let decodeKey: BinaryKeyDecoder | null = null;
  if (target.kind === "by-key") {
    const listed = spec.columns;
    let columns = listed?.map((column) => ({ name: column, typeOid: 0, typeName: "" }));
    if (listed === undefined || binary) {
      const read = await tableColumns(session, analysis, table, mode);
      if (read === "failed") return;
      if (read.length === 0) return session.fail(copyTableUnreadable(name), mode);
      columns = listed === undefined ? read : listed.map((column) => read.find((c) => c.name === column)!);
    }
    const index = (listed ?? columns!.map((column) => column.name)).indexOf(target.key);
    if (index === -1) return session.fail(copyWithoutKeyColumn(name, target.key), mode);
    keyField = { index, name: target.key };
    if (binary) {
      const column = columns![index];
      decodeKey = column === undefined ? null : binaryKeyDecoder(column.typeOid);
      if (decodeKey === null) {
        const type = column?.typeName ?? "unknown";
        return session.fail(copyBinaryKeyType(name, target.key, type, BINARY_KEY_TYPES), mode);
      }
    }
  }

  // One connection per region, in the block (an implicit one when the client has none).
  await session.settle();
  const implicit = session.txn === null;
  const txn = session.txn ?? session.block.begin("BEGIN", true, session.settings.snapshot());
  const copies: RegionCopy[] = [];
  let failure: PgError | null = null;
  for (const region of regions) {
    const leg = await session.legFor(region, false, mode);
    if (leg instanceof PgError) {
      failure = leg;
      break;
    }
    await session.settle();
    noteWrite(session, leg.region, leg);
    if (leg.broken !== null || txn.status === "E") {
      failure = leg.broken ?? inFailedTransaction();
      break;
    }
    copies.push(new RegionCopy(leg, (l) => session.reattach(l)));
  }
  if (failure === null) {
    await Promise.all(copies.map((copy) => copy.start(analysis.text)));
    failure = firstError(copies, topology);
  }
  if (failure !== null) {
    await Promise.all(copies.map((copy) => copy.abort("another region refused the COPY")));
    return finishFailed(session, txn, implicit, failure, mode);
  }

  // Every region waits for data: so does the client now, told as the home region told.
  const home = copies.find((copy) => copy.region === topology.home.id) ?? copies[0]!;
  session.relay.local({ bytes: home.response! });
  const placement: RowPlacement =
    target.kind === "everywhere"
      ? { kind: "everywhere" }
      : {
          kind: "by-key",
          key: keyField!,
          topology,
          directory: runtime.router.directory,
          recordNewKeys: runtime.moves !== undefined && runtime.config.directoryStore?.recordNewKeys === true,
          ...(target.hinted === undefined ? {} : { hinted: target.hinted }),
        };
  const split = new CopySplit(copies, placement, name, binary);
  const maxRow = runtime.config.server.maxMessageBytes;
  split.reader = binary
    ? new BinaryRows(split, keyField, decodeKey ?? (() => null), maxRow)
    : new LineReader(
        format,
        format.format === "csv" ? new CsvLines(format, keyField?.name ?? null) : new TextLines(format),
        split,
        keyField,
        maxRow,
      );
  for (const copy of copies) copy.onFailed = (failed) => split.regionFailed(failed);
  // A CancelRequest stops the COPY everywhere; so does the client leaving (the session runs its
  // cancel hooks when it closes).
  const cancel = (): void => split.cancel();
  session.cancelHooks.add(cancel);
  session.client.copyFrom(split);
  const outcome = await split.outcome;
  session.cancelHooks.delete(cancel);
  session.client.copyEnded(split);

  failure = await endRegionCopies(copies, split, outcome, topology);
  if (failure === null && target.kind === "everywhere") {
    // Every copy loaded the same rows: each must have loaded as many (a WHERE sees the same rows).
    const counts = copies.map((copy) => ({ region: copy.region, rows: tagCount(copy.tag) ?? 0 }));
    if (counts.some((count) => count.rows !== counts[0]!.rows)) failure = copiesDiverged([name], counts);
  }
  const newKeys = new Map<string, string[]>();
  if (failure === null && placement.kind === "by-key" && placement.recordNewKeys) {
    failure = await recordFirstWrites(session, copies, split, newKeys);
  }
  if (failure !== null) return finishFailed(session, txn, implicit, failure, mode);

  let total = 0;
  for (const [i, copy] of copies.entries()) {
    const rows = tagCount(copy.tag) ?? 0;
    total = target.kind === "everywhere" ? rows : total + rows;
    if (rows > 0 || split.rowsTo[i]! > 0 || newKeys.has(copy.region)) {
      txn.writeRegion ??= copy.region;
      txn.writeRegions.add(copy.region);
      copy.leg.wrote = true;
    }
  }
  if (implicit) {
    const error = await commitImplicit(session, txn);
    if (error !== null) {
      session.relay.error(error, false);
      if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
      return;
    }
  }
  for (const [region, keys] of newKeys) {
    for (const key of keys)
      if (runtime.router.directory.lookup(key) === undefined) assign(session, key, region);
  }
  session.relay.local({ bytes: encodeCommandComplete({ tag: `COPY ${total}` }) });
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
}

/**
 * Ends every region's COPY as the client's stream ended: CopyDone after the last rows, or
 * CopyFail when the client failed it, a row could not be placed or a region failed. Resolves
 * with the error for the client (a region's own, the home region's first), or null.
 */
async function endRegionCopies(
  copies: readonly RegionCopy[],
  split: CopySplit,
  outcome: CopyOutcome,
  topology: Topology,
): Promise<PgError | null> {
  switch (outcome.kind) {
    case "done":
      await Promise.all(copies.map((copy, i) => copy.finish(split.remainder(i))));
      return firstError(copies, topology);
    case "client-failed":
      // Each region answers CopyFail as PostgreSQL does (57014, with the client's message).
      await Promise.all(copies.map((copy) => copy.abort(outcome.message)));
      return firstError(copies, topology) ?? internalError("COPY failed");
    case "failed":
      await Promise.all(copies.map((copy) => copy.abort("COPY stopped by the proxy: another part failed")));
      return outcome.error ?? outcome.region?.error ?? internalError("a region failed during COPY");
  }
}

/** The keys no directory entry listed, recorded in the region their rows went to, in the COPY's block. */
async function recordFirstWrites(
  session: SessionPort,
  copies: readonly RegionCopy[],
  split: CopySplit,
  into: Map<string, string[]>,
): Promise<PgError | null> {
  const moves = session.runtime.moves;
  if (moves === undefined) return null;
  const store = moves.store;
  for (const [i, copy] of copies.entries()) {
    // Shared: every key the split placed as new is claimed, even one a visit has listed since (a
    // peer's claim): the claim then answers where the key is, and a COPY that put it elsewhere fails.
    const keys = [...split.newKeys[i]!].filter(
      (key) => moves.shared !== undefined || store.directory.lookup(key) === undefined,
    );
    if (keys.length === 0) continue;
    const claimed = await moves.claimCopied(keys, copy.region);
    if (claimed !== null) return claimed;
    const answer = await runCollected(copy.leg, store.recordSql(keys, copy.region), (leg) =>
      session.reattach(leg),
    );
    if (answer.error !== null) return answer.error;
    into.set(copy.region, keys);
  }
  return null;
}

function assign(session: SessionPort, key: string, region: string): void {
  session.runtime.moves?.store.directory.assign(key, region);
}

/** Commits the COPY's own block: in two phases when several regions got rows. Null once committed. */
async function commitImplicit(session: SessionPort, txn: Transaction): Promise<PgError | null> {
  const legs = [...txn.legs.values()];
  let error: PgError | null = null;
  if (txn.writeRegions.size > 1) error = await commitAcrossRegions(session, txn);
  else {
    const stepTimeoutMs = session.runtime.config.txn.stepTimeoutMs;
    const results = await Promise.all(
      legs.map((leg) =>
        runOn(leg.connection, "COMMIT", stepTimeoutMs).then(
          (result) => (result.command === "ROLLBACK" ? inFailedTransaction() : null),
          (failed: unknown) => (failed instanceof PgError ? failed : internalError(failed)),
        ),
      ),
    );
    error = results.find((result) => result !== null) ?? null;
    session.runtime.observability.blockEnded("commit", error === null);
  }
  endBlock(session, txn, error === null);
  return error;
}

/** Rolls the COPY back everywhere (or fails the client's block) and sends the error. */
async function finishFailed(
  session: SessionPort,
  txn: Transaction,
  implicit: boolean,
  error: PgError,
  mode: StatementMode,
): Promise<void> {
  if (implicit) {
    await rollbackAll([...txn.legs.values()], session.runtime.config.txn.stepTimeoutMs);
    session.runtime.observability.transactionEnded("aborted");
    endBlock(session, txn, false);
  } else session.block.fail();
  session.relay.error(error, false);
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
}

function endBlock(session: SessionPort, txn: Transaction, committed: boolean): void {
  const legs = [...txn.legs.values()];
  session.block.end();
  if (!committed) session.settings.restore(txn.settingsBefore);
  txn.settleSettings(committed, (applied) => session.settings.markApplied(applied));
  for (const leg of legs) session.releaseLeg(leg);
}

/** The first region's error, the home region's before the others'. */
function firstError(copies: readonly RegionCopy[], topology: Topology): PgError | null {
  const home = copies.find((copy) => copy.region === topology.home.id && copy.error !== null);
  return home?.error ?? copies.find((copy) => copy.error !== null)?.error ?? null;
}

function policyOf(
  topology: Topology,
  table: { readonly schema?: string; readonly name: string },
): TablePolicy | undefined {
  const tables = topology.tables;
  if (table.schema !== undefined) {
    const qualified = tables.get(`${table.schema}.${table.name}`);
    if (qualified !== undefined || table.schema !== "public") return qualified;
  }
  return tables.get(table.name);
}
