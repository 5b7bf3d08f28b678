import type { PgError, PgErrorInit } from "@geo/proto";
import { normalizeStatement } from "./split-statements.js";

/** Raw parameter values as the client bound them (text or binary per its format codes); null is SQL NULL. */
export type FakeParams = readonly (Buffer | null)[];

/**
 * Which statements a rule answers. A string matches the whole statement, case-insensitively, after
 * comments and extra whitespace are removed and a trailing semicolon dropped ("select 1" matches
 * "SELECT  1;"). A RegExp is tested against the statement text as received. A function decides.
 */
export type StatementMatcher = string | RegExp | ((sql: string, params: FakeParams) => boolean);

/** A result column; a bare string is a text column (type OID 25). */
export interface FakeColumn {
  readonly name: string;
  /** pg_type OID; 25 (text) when omitted. */
  readonly typeOid?: number;
}

/** A cell: strings are sent as they are, numbers/bigints/booleans in PostgreSQL's text form, Buffers raw. */
export type FakeValue = string | number | bigint | boolean | Buffer | null;

/** How the fake answers one statement. Every field is optional; `{}` answers with no rows. */
export interface FakeReply {
  /** Columns of the result; omit for a statement that returns no rows (NoData). */
  readonly columns?: readonly (string | FakeColumn)[];
  readonly rows?: readonly (readonly FakeValue[])[];
  /** CommandComplete tag; defaults to `SELECT <n>` with columns, else the statement's leading keyword(s). */
  readonly tag?: string;
  /** Answer with this ErrorResponse instead of a result; severity FATAL also closes the connection. */
  readonly error?: PgError | PgErrorInit;
  /** NoticeResponses sent before the result (severity NOTICE unless given). */
  readonly notices?: readonly (PgError | PgErrorInit)[];
  /** Wait this long before answering (a CancelRequest cuts the wait short with 57014). */
  readonly delayMs?: number;
  /** Never answer; the connection stays open until the client, a CancelRequest or `close()` ends it. */
  readonly stall?: boolean;
  /** Send RowDescription and this many DataRows, then close the socket mid-result. */
  readonly closeAfterRows?: number;
  /** The statement takes effect (a PREPARE TRANSACTION is recorded) but the socket closes before any answer. */
  readonly vanish?: boolean;
}

/** What a handler and a reply function see. */
export interface FakeContext {
  /** Connection number, from 1, in the order connections were accepted. */
  readonly connectionId: number;
  readonly user: string;
  readonly database: string;
  readonly protocol: "simple" | "extended";
  /**
   * "describe" when the fake needs the result's columns before execution (Describe of a statement
   * or portal); side effects should then be skipped. "execute" otherwise.
   */
  readonly phase: "describe" | "execute";
  readonly transactionStatus: "I" | "T" | "E";
  /** Parameter i as UTF-8 text (null for NULL or out of range). */
  text(index: number): string | null;
  /** Transactions prepared on this fake and not yet committed or rolled back (shared by all connections). */
  readonly preparedTransactions: ReadonlySet<string>;
}

/** Answers a statement, or returns undefined to let the next rule (or the defaults) answer. */
export type FakeHandler = (
  sql: string,
  params: FakeParams,
  ctx: FakeContext,
) => FakeReply | undefined | Promise<FakeReply | undefined>;

export interface FakeRule {
  readonly match: StatementMatcher;
  readonly reply:
    | FakeReply
    | ((sql: string, params: FakeParams, ctx: FakeContext) => FakeReply | Promise<FakeReply>);
  /** Answer only this many executions, then step aside (describes do not count). */
  readonly times?: number;
}

export function matches(matcher: StatementMatcher, sql: string, params: FakeParams): boolean {
  if (typeof matcher === "string")
    return normalizeStatement(sql).toLowerCase() === normalizeStatement(matcher).toLowerCase();
  if (matcher instanceof RegExp) {
    matcher.lastIndex = 0;
    return matcher.test(sql);
  }
  return matcher(sql, params);
}

export function columnOf(column: string | FakeColumn): Required<FakeColumn> {
  return typeof column === "string"
    ? { name: column, typeOid: 25 }
    : { name: column.name, typeOid: column.typeOid ?? 25 };
}

export function valueText(value: Exclude<FakeValue, Buffer | null>): string {
  if (typeof value === "boolean") return value ? "t" : "f";
  return String(value);
}
