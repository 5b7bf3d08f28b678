import type { BackendConnection } from "@geo/pool";
import { BackendCode, decodeErrorResponse, encodeQuery, isProtocolFault, PgError } from "@geo/proto";
import type { Leg } from "../executor/leg.js";

/** One region's whole answer to a statement, held back so answers of several regions can be combined. */
export interface LegAnswer {
  readonly region: string;
  /** The RowDescription message as the backend sent it, when the statement returns rows. */
  readonly description: Buffer | null;
  /** DataRow messages, copied, in the backend's order. */
  readonly rows: Buffer[];
  /** NoticeResponse messages, copied. */
  readonly notices: Buffer[];
  /** The CommandComplete tag ("INSERT 0 2", "UPDATE 3"), "" when none came. */
  readonly tag: string;
  readonly error: PgError | null;
}

/**
 * Runs one simple-protocol statement on a leg the session holds and collects the answer instead of
 * relaying it. The leg must be quiescent (no answers outstanding); its frames go back to the
 * session's relay when the answer is complete. Never rejects: a lost connection becomes `error`.
 * `onNotice`: notices are handed over as they come (copied) instead of being collected.
 */
export function runCollected(
  leg: Leg,
  sql: string,
  relayFrame: (leg: Leg) => void,
  onNotice?: (notice: Buffer) => void,
): Promise<LegAnswer> {
  return collectAnswer(leg.region, leg.connection, encodeQuery({ sql }), () => relayFrame(leg), onNotice);
}

/**
 * Writes `bytes` (a simple Query, or extended messages ending with Sync) and collects the answer up
 * to ReadyForQuery, then calls `restore` to give the connection's frames back to their owner.
 */
export function collectAnswer(
  region: string,
  connection: BackendConnection,
  bytes: Buffer | readonly Buffer[],
  restore: () => void,
  onNotice?: (notice: Buffer) => void,
): Promise<LegAnswer> {
  let description: Buffer | null = null;
  const rows: Buffer[] = [];
  const notices: Buffer[] = [];
  let tag = "";
  let error: PgError | null = null;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      unsubscribe();
      restore();
      resolve({ region, description, rows, notices, tag, error });
    };
    const unsubscribe = connection.onBroken((lost) => {
      error ??= lost;
      finish();
    });
    const broken = connection.brokenError;
    if (broken !== null) {
      error = broken;
      finish();
      return;
    }
    connection.setReceiver({
      onFrame: (frame) => {
        switch (frame.code) {
          case BackendCode.RowDescription:
            description = Buffer.from(frame.bytes);
            rows.length = 0;
            return;
          case BackendCode.DataRow:
            rows.push(Buffer.from(frame.bytes));
            return;
          case BackendCode.NoticeResponse:
            if (onNotice === undefined) notices.push(Buffer.from(frame.bytes));
            else onNotice(Buffer.from(frame.bytes));
            return;
          case BackendCode.CommandComplete: {
            const nul = frame.payload.indexOf(0);
            tag = frame.payload.toString("latin1", 0, nul === -1 ? frame.payload.length : nul);
            return;
          }
          case BackendCode.ErrorResponse: {
            const decoded = decodeErrorResponse(frame.payload);
            if (error === null && !isProtocolFault(decoded)) error = PgError.fromFields(decoded.fields);
            return;
          }
          case BackendCode.ReadyForQuery:
            finish();
            return;
          default:
            return;
        }
      },
    });
    connection.write(bytes);
  });
}

/** The row count a CommandComplete tag reports (INSERT's last number, UPDATE's, DELETE's, ...). */
export function tagCount(tag: string): number | null {
  const match = /^(INSERT \d+|UPDATE|DELETE|MERGE|SELECT|COPY|MOVE|FETCH) (\d+)$/.exec(tag);
  return match === null ? null : Number(match[2]);
}

/** The tag for several regions' answers to one statement: their counts summed. */
export function combinedTag(tags: readonly string[]): string {
  const first = tags[0] ?? "";
  const count = tagCount(first);
  if (count === null) return first;
  const total = tags.reduce((sum, tag) => sum + (tagCount(tag) ?? 0), 0);
  return `${first.slice(0, first.lastIndexOf(" "))} ${total}`;
}
