import { encodeCommandComplete, encodeDataRow, PgError } from "@geo/proto";
import type { Analysis } from "@geo/sql";
import { runConsoleCommand } from "../console/index.js";
import { textRowDescription } from "../console/text-row-description.js";
import type { SessionPort } from "../engine/session-port.js";
import type { StatementMode } from "../engine/statement-mode.js";
import { boundExecute } from "./sql-prepared.js";

/** Console commands answered from the proxy's own state, as an ordinary result set. */
export function runConsole(
  session: SessionPort,
  analysis: Analysis,
  mode: StatementMode,
  describe: boolean,
): void {
  const result = runConsoleCommand(analysis.text, {
    ...session.runtime.consoleContext(session.user, session.socket.remoteAddress),
    heldExecute: (statement) => boundExecute(session, statement),
  });
  if (result instanceof PgError) {
    session.fail(result, mode);
    return;
  }
  const parts: Buffer[] = [];
  if (describe) parts.push(textRowDescription(result.columns));
  for (const row of result.rows) {
    parts.push(encodeDataRow({ values: row.map((value) => (value === null ? null : Buffer.from(value))) }));
  }
  parts.push(encodeCommandComplete({ tag: result.tag }));
  session.relay.local({ bytes: Buffer.concat(parts) });
  if (mode.final) session.relay.local({ bytes: () => session.readyForQuery() });
}

/** The RowDescription a console command answers with (Describe before Execute). */
export function consoleDescription(session: SessionPort, analysis: Analysis): Buffer | null {
  const result = runConsoleCommand(analysis.text, session.runtime.consoleContext(session.user));
  return result instanceof PgError ? null : textRowDescription(result.columns);
}
