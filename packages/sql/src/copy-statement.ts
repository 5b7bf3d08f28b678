import { type Node, nodeAs, stringValue } from "./ast.js";
import { deparse } from "./deparse.js";
import { parseOne } from "./parser.js";

/** The data formats of COPY. */
export const COPY_FORMATS = ["text", "csv", "binary"] as const;
export type CopyFormat = (typeof COPY_FORMATS)[number];

/**
 * A COPY statement's options as written (absent when not given): what a proxy needs to read the
 * data stream row by row. PostgreSQL's own defaults are not applied here, and nothing is
 * validated: the server that runs the statement still checks the options and gives its own error.
 */
export interface CopyOptions {
  readonly format: CopyFormat;
  readonly delimiter?: string;
  readonly null?: string;
  /** HEADER, HEADER true/false/on/off/1/0, or HEADER MATCH. */
  readonly header?: boolean | "match";
  readonly quote?: string;
  readonly escape?: string;
  /** FORCE_NULL (columns), or `*` for every column. */
  readonly forceNull?: readonly string[] | "*";
  readonly forceNotNull?: readonly string[] | "*";
  readonly forceQuote?: readonly string[] | "*";
  readonly encoding?: string;
}

/** What a COPY statement reads or writes, and where its data goes. */
export interface CopyStatement {
  /** True for COPY ... FROM. */
  readonly from: boolean;
  /** `stdio` for FROM STDIN / TO STDOUT (the data travels in the protocol), else a file or a program on the server. */
  readonly target: "stdio" | "file" | "program";
  /** The table named (COPY t ...); absent for COPY (query) TO. */
  readonly table?: { readonly schema?: string; readonly name: string };
  /** The column list as written, case-folded as PostgreSQL folds it; absent when omitted. */
  readonly columns?: readonly string[];
  /** COPY (query) TO: the query, deparsed. */
  readonly query?: string;
  /** COPY ... FROM ... WHERE: a condition filters the rows loaded. */
  readonly filtered: boolean;
  readonly options: CopyOptions;
}

/**
 * Reads a COPY statement's table, columns, direction and options from its parse tree; undefined
 * when `text` is not one COPY statement.
 *
 * @example
 * copyStatement("COPY users (id, name) FROM STDIN WITH (FORMAT csv, HEADER)");
 * // { from: true, target: "stdio", table: { name: "users" }, columns: ["id", "name"],
 * //   filtered: false, options: { format: "csv", header: true } }
 */
export function copyStatement(text: string): CopyStatement | undefined {
  const copy = nodeAs(parseOne(text), "CopyStmt");
  if (copy === undefined) return undefined;
  const target = copy.is_program === true ? "program" : copy.filename !== undefined ? "file" : "stdio";
  const relation = copy.relation;
  const columns = copy.attlist?.map((item) => stringValue(item) ?? "");
  let options: { -readonly [K in keyof CopyOptions]: CopyOptions[K] } = { format: "text" };
  for (const item of copy.options ?? []) {
    const option = nodeAs(item, "DefElem");
    if (option?.defname === undefined) continue;
    options = withOption(options, option.defname, option.arg);
  }
  return {
    from: copy.is_from === true,
    target,
    ...(relation?.relname === undefined
      ? {}
      : {
          table: {
            ...(relation.schemaname === undefined ? {} : { schema: relation.schemaname }),
            name: relation.relname,
          },
        }),
    ...(columns === undefined ? {} : { columns }),
    ...(copy.query === undefined ? {} : { query: deparse(copy.query) }),
    filtered: copy.whereClause !== undefined,
    options,
  };
}

function withOption(options: CopyOptions, name: string, arg: Node | undefined): CopyOptions {
  switch (name) {
    case "format": {
      const format = (stringValue(arg) ?? "text").toLowerCase();
      return { ...options, format: format === "csv" || format === "binary" ? format : "text" };
    }
    case "delimiter":
    case "null":
    case "quote":
    case "escape":
    case "encoding": {
      const value = stringValue(arg);
      return value === undefined ? options : { ...options, [name]: value };
    }
    case "header":
      return { ...options, header: headerValue(arg) };
    case "force_null":
      return { ...options, forceNull: columnList(arg) };
    case "force_not_null":
      return { ...options, forceNotNull: columnList(arg) };
    case "force_quote":
      return { ...options, forceQuote: columnList(arg) };
    default:
      return options;
  }
}

/** HEADER's argument as PostgreSQL reads a boolean option, or MATCH. */
function headerValue(arg: Node | undefined): boolean | "match" {
  if (arg === undefined) return true;
  const flag = nodeAs(arg, "Boolean");
  if (flag !== undefined) return flag.boolval === true;
  const number = nodeAs(arg, "Integer");
  if (number !== undefined) return (number.ival ?? 0) !== 0;
  const word = (stringValue(arg) ?? "").toLowerCase();
  if (word === "match") return "match";
  return !(
    word === "false" ||
    word === "off" ||
    word === "0" ||
    word === "no" ||
    word === "f" ||
    word === "n"
  );
}

function columnList(arg: Node | undefined): readonly string[] | "*" {
  if (arg === undefined || nodeAs(arg, "A_Star") !== undefined) return "*";
  const list = nodeAs(arg, "List");
  return (list?.items ?? []).map((item) => stringValue(item) ?? "");
}
