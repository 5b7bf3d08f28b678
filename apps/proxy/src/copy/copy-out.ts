import { encodeCommandComplete, encodeCopyOutResponse, type FormatCode, Messages, PgError } from "@geo/proto";
import { type Analysis, type CopyStatement, copyStatement } from "@geo/sql";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { allValues } from "../scatter/data-row.js";
import { NO_PARAMS } from "../scatter/region-statement.js";
import { reportFailure } from "../scatter/run-scatter.js";
import { openScatter } from "../scatter/scatter-read.js";
import { quoteIdent } from "../session/settings/quote.js";
import { copyFormatSpec } from "./copy-format.js";
import { copyOutLine } from "./copy-out-rows.js";
import { tableColumns } from "./table-columns.js";

/** Output is written to the client in chunks of about this many bytes. */
const CHUNK_BYTES = 64 * 1024;
const BINARY_HEADER = Buffer.concat([Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"), Buffer.alloc(8)]);
const BINARY_TRAILER = Buffer.from([0xff, 0xff]);

/**
 * COPY ... TO STDOUT of rows in several regions: answered as the SELECT it stands for is
 * answered across regions (COPY t is `SELECT <its columns> FROM ONLY t`; COPY (query) is the
 * query), so ORDER BY, aggregates and joins are combined exactly as they are for that SELECT,
 * then written in the COPY's format: text or CSV from the rows' text values, escaped and quoted
 * as PostgreSQL writes them, or binary from the rows asked of the regions in binary (a DataRow's
 * columns are laid out as a binary COPY tuple's). Returns false when the statement is not one.
 */
export async function runCopyToStdout(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
): Promise<boolean> {
  if (mode.extended || analysis.kind !== "copy") return false;
  let spec: CopyStatement | undefined;
  try {
    spec = copyStatement(analysis.text);
  } catch {
    return false;
  }
  if (spec === undefined || spec.from || spec.target !== "stdio") return false;
  const router = session.runtime.router;
  let select: string;
  if (spec.query !== undefined) select = spec.query;
  else if (spec.table !== undefined) {
    const table = spec.table;
    let columns = spec.columns;
    if (columns === undefined) {
      const read = await tableColumns(session, analysis, table, mode);
      if (read === "failed") return true;
      columns = read.map((column) => column.name);
    }
    const relation = [table.schema, table.name]
      .filter((part) => part !== undefined)
      .map((part) => quoteIdent(part as string))
      .join(".");
    select = `SELECT ${columns.map((column) => quoteIdent(column)).join(", ")} FROM ONLY ${relation}`;
  } else return false;
  const selectAnalysis = router.analyze(select);
  if (selectAnalysis instanceof PgError) {
    session.fail(selectAnalysis, mode);
    return true;
  }
  const route = router.route(selectAnalysis, undefined, session.searchPath());
  if (route.kind === "error") {
    session.observed.routed(route);
    session.fail(route.error, mode);
    return true;
  }
  if (route.kind !== "multi-region" || route.plan.kind !== "scatter") return false;
  session.observed.routed(route);
  await session.settle();
  const format = copyFormatSpec(spec.options);
  const binary = format.format === "binary";
  try {
    const resultFormats: FormatCode[] = binary ? [1] : [];
    const answer = await openScatter(
      session,
      { analysis: selectAnalysis, plan: route.plan, params: NO_PARAMS, resultFormats },
      mode,
    );
    const fields = answer.fields ?? [];
    const columnFormat: FormatCode = binary ? 1 : 0;
    session.relay.local({
      bytes: encodeCopyOutResponse({ format: columnFormat, columnFormats: fields.map(() => columnFormat) }),
    });
    const forced = spec.options.forceQuote;
    const names = fields.map((field) => field.name);
    const forceQuote =
      forced === undefined
        ? () => false
        : forced === "*"
          ? () => true
          : (column: number) => forced.includes(names[column] ?? "");
    const out = new CopyOutWriter(session);
    let rows = 0;
    try {
      if (binary) await out.add(BINARY_HEADER);
      else if (format.header) {
        await out.add(
          copyOutLine(
            names.map((name) => Buffer.from(name)),
            format,
            () => false,
          ),
        );
      }
      for (let row = await answer.rows.next(); row !== null; row = await answer.rows.next()) {
        rows++;
        await out.add(binary ? row : copyOutLine(allValues(row), format, forceQuote));
      }
      if (binary) await out.add(BINARY_TRAILER);
      await out.flush();
    } catch (error) {
      await answer.rows.close(true);
      throw error;
    }
    await answer.rows.close(false);
    session.relay.local({
      bytes: Buffer.concat([Messages.copyDone, encodeCommandComplete({ tag: `COPY ${rows}` })]),
    });
    session.runtime.observability.multiRegionRead(answer.finish);
  } catch (error) {
    reportFailure(session, error, mode);
    return true;
  }
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
  return true;
}

/** CopyData messages of about CHUNK_BYTES each, waiting whenever the client's socket is full. */
class CopyOutWriter {
  private parts: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly session: SessionPort) {}

  async add(data: Buffer): Promise<void> {
    // Copied: a row's payload is a view the scatter may reuse.
    this.parts.push(Buffer.from(data));
    this.bytes += data.length;
    if (this.bytes >= CHUNK_BYTES) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.bytes === 0) return;
    const header = Buffer.allocUnsafe(5);
    header[0] = 0x64;
    header.writeInt32BE(4 + this.bytes, 1);
    this.session.relay.local({ bytes: Buffer.concat([header, ...this.parts], 5 + this.bytes) });
    this.parts = [];
    this.bytes = 0;
    if (this.session.writer.socket.writableNeedDrain) {
      await new Promise<void>((resolve) => this.session.writer.onDrain(resolve));
    }
  }
}
