import { normalizeStatement } from "./split-statements.js";

/** What a statement does to the session, as far as the fake tracks it. */
export const StatementKind = {
  begin: "begin",
  commit: "commit",
  rollback: "rollback",
  prepareTransaction: "prepare-transaction",
  commitPrepared: "commit-prepared",
  rollbackPrepared: "rollback-prepared",
  savepoint: "savepoint",
  release: "release",
  rollbackTo: "rollback-to",
  set: "set",
  reset: "reset",
  discard: "discard",
  show: "show",
  listen: "listen",
  unlisten: "unlisten",
  notify: "notify",
  other: "other",
} as const;
export type StatementKind = (typeof StatementKind)[keyof typeof StatementKind];

export interface ClassifiedStatement {
  readonly kind: StatementKind;
  readonly normalized: string;
  /** The transaction identifier of PREPARE TRANSACTION / COMMIT PREPARED / ROLLBACK PREPARED. */
  readonly gid?: string;
}

function quotedLiteral(text: string): string | undefined {
  const match = /^'((?:[^']|'')*)'/.exec(text.trim());
  return match === null ? undefined : match[1]!.replaceAll("''", "'");
}

export function classifyStatement(sql: string): ClassifiedStatement {
  const normalized = normalizeStatement(sql);
  const upper = normalized.toUpperCase();
  const withGid = (kind: StatementKind, prefix: RegExp): ClassifiedStatement => {
    const gid = quotedLiteral(normalized.replace(prefix, ""));
    return gid === undefined ? { kind, normalized } : { kind, normalized, gid };
  };
  if (/^(BEGIN|START TRANSACTION)\b/.test(upper)) return { kind: StatementKind.begin, normalized };
  if (/^PREPARE TRANSACTION\b/.test(upper))
    return withGid(StatementKind.prepareTransaction, /^PREPARE TRANSACTION\s*/i);
  if (/^COMMIT PREPARED\b/.test(upper)) return withGid(StatementKind.commitPrepared, /^COMMIT PREPARED\s*/i);
  if (/^ROLLBACK PREPARED\b/.test(upper))
    return withGid(StatementKind.rollbackPrepared, /^ROLLBACK PREPARED\s*/i);
  if (/^ROLLBACK( WORK| TRANSACTION)? TO\b/.test(upper))
    return { kind: StatementKind.rollbackTo, normalized };
  if (/^(COMMIT|END)\b/.test(upper)) return { kind: StatementKind.commit, normalized };
  if (/^(ROLLBACK|ABORT)\b/.test(upper)) return { kind: StatementKind.rollback, normalized };
  if (/^SAVEPOINT\b/.test(upper)) return { kind: StatementKind.savepoint, normalized };
  if (/^RELEASE\b/.test(upper)) return { kind: StatementKind.release, normalized };
  if (/^SET\b/.test(upper)) return { kind: StatementKind.set, normalized };
  if (/^RESET\b/.test(upper)) return { kind: StatementKind.reset, normalized };
  if (/^DISCARD\b/.test(upper)) return { kind: StatementKind.discard, normalized };
  if (/^SHOW\b/.test(upper)) return { kind: StatementKind.show, normalized };
  if (/^LISTEN\b/.test(upper)) return { kind: StatementKind.listen, normalized };
  if (/^UNLISTEN\b/.test(upper)) return { kind: StatementKind.unlisten, normalized };
  if (/^NOTIFY\b/.test(upper)) return { kind: StatementKind.notify, normalized };
  return { kind: StatementKind.other, normalized };
}

/** Statements that end a transaction block whatever their outcome. */
export function endsTransaction(kind: StatementKind): boolean {
  return (
    kind === StatementKind.commit ||
    kind === StatementKind.rollback ||
    kind === StatementKind.prepareTransaction
  );
}

/** Statements PostgreSQL still runs in a failed transaction block. */
export function allowedInFailedTransaction(kind: StatementKind): boolean {
  return endsTransaction(kind) || kind === StatementKind.rollbackTo;
}

/** The CommandComplete tag PostgreSQL uses for a statement that returns no rows. */
export function defaultTag(normalized: string, rowCount: number, hasColumns: boolean): string {
  const upper = normalized.toUpperCase();
  const words = upper.split(" ");
  const first = words[0] ?? "";
  if (hasColumns || first === "SELECT" || first === "VALUES" || first === "TABLE" || first === "WITH") {
    return `SELECT ${rowCount}`;
  }
  switch (first) {
    case "INSERT":
      return `INSERT 0 ${rowCount}`;
    case "UPDATE":
    case "DELETE":
    case "MERGE":
    case "MOVE":
    case "FETCH":
    case "COPY":
      return `${first} ${rowCount}`;
    case "START":
      return "START TRANSACTION";
    case "END":
      return "COMMIT";
    case "ABORT":
      return "ROLLBACK";
    case "CREATE":
    case "DROP":
    case "ALTER": {
      const objectWords = words
        .slice(1)
        .filter(
          (word) =>
            !["OR", "REPLACE", "TEMP", "TEMPORARY", "UNLOGGED", "UNIQUE", "IF", "NOT", "EXISTS"].includes(
              word,
            ),
        );
      return `${first} ${objectWords[0] ?? ""}`.trim();
    }
    case "PREPARE":
      return words[1] === "TRANSACTION" ? "PREPARE TRANSACTION" : "PREPARE";
    case "COMMIT":
      return words[1] === "PREPARED" ? "COMMIT PREPARED" : "COMMIT";
    case "ROLLBACK":
      return words[1] === "PREPARED" ? "ROLLBACK PREPARED" : "ROLLBACK";
    case "DISCARD":
      return `DISCARD ${words[1] ?? "ALL"}`;
    default:
      return first;
  }
}

/** The channel of LISTEN / UNLISTEN / NOTIFY, folded to lower case unless quoted, as identifiers are. */
export function channelOf(normalized: string): string | undefined {
  const match = /^(?:LISTEN|UNLISTEN|NOTIFY)\s+("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*|\*)/i.exec(normalized);
  if (match === null) return undefined;
  const name = match[1]!;
  return name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name.toLowerCase();
}

/** The payload of `NOTIFY channel, 'payload'` ("" when absent). */
export function notifyPayload(normalized: string): string {
  const match = /,\s*'((?:[^']|'')*)'\s*$/.exec(normalized);
  return match === null ? "" : match[1]!.replaceAll("''", "'");
}
