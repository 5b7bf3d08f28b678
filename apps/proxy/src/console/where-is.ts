import { canonicalKey, placeKey, type TablePolicy } from "@geo/core";
import { PgError } from "@geo/proto";
import { type ConsoleHandler, selectRows } from "./console-command.js";
import { consoleSyntaxError, invalidIntegerKey, unknownConsoleTable } from "./console-errors.js";
import type { ConsoleContext } from "./context.js";

export const WHERE_IS_COLUMNS = ["table", "key", "region", "state"] as const;

/**
 * Where a key's rows are, by the table's placement:
 * - `resident`: the directory lists the key; its rows are in that region.
 * - `placed by hash`: no entry; the key's rows are (or would be created) in the home location's
 *   shard its hash picks, which is where the router sends it.
 * - `replicated`: the table has a copy in every region.
 * - `pinned`: the table lives in one region, whatever the key.
 */
export const WHERE_IS_STATES = ["resident", "placed by hash", "replicated", "pinned"] as const;
export type WhereIsState = (typeof WHERE_IS_STATES)[number];

const SYNTAX = "WHERE IS <table> <key>";
const EXAMPLE = "WHERE IS users alice, or WHERE IS users 'alice smith' for a key with spaces";
const CATALOG_SCHEMAS = new Set(["pg_catalog", "information_schema"]);
const INTEGER = /^[+-]?\d+$/;

interface TableName {
  readonly schema: string | undefined;
  readonly name: string;
}

type Placed =
  | { readonly placement: "geo_partitioned" }
  | { readonly placement: "global_replicated" }
  | { readonly placement: "pinned"; readonly region: string };

/** Reads an identifier as PostgreSQL does: quoted ones exactly, bare ones folded to lower case. */
function readIdentifier(text: string, at: number): { value: string; end: number } | undefined {
  if (text[at] === '"') {
    let value = "";
    let index = at + 1;
    while (index < text.length) {
      const char = text[index]!;
      if (char === '"') {
        if (text[index + 1] === '"') {
          value += '"';
          index += 2;
          continue;
        }
        return value === "" ? undefined : { value, end: index + 1 };
      }
      value += char;
      index++;
    }
    return undefined;
  }
  const match = /^[^\s."']+/.exec(text.slice(at));
  return match === null ? undefined : { value: match[0].toLowerCase(), end: at + match[0].length };
}

/** A key: a string literal ('...' with '' for a quote) or one bare word. */
function readKey(text: string): string | undefined {
  if (text.startsWith("'")) {
    let value = "";
    let index = 1;
    while (index < text.length) {
      const char = text[index]!;
      if (char === "'") {
        if (text[index + 1] === "'") {
          value += "'";
          index += 2;
          continue;
        }
        return text.slice(index + 1).trim() === "" ? value : undefined;
      }
      value += char;
      index++;
    }
    return undefined;
  }
  return /^\S+$/.test(text) ? text : undefined;
}

function parseArgument(argument: string): { table: TableName; key: string } | PgError {
  const first = readIdentifier(argument, 0);
  if (first === undefined) return consoleSyntaxError("WHERE IS needs a table and a key", SYNTAX, EXAMPLE);
  let table: TableName = { schema: undefined, name: first.value };
  let end = first.end;
  if (argument[end] === ".") {
    const second = readIdentifier(argument, end + 1);
    if (second === undefined)
      return consoleSyntaxError("WHERE IS needs a table name after the schema", SYNTAX, EXAMPLE);
    table = { schema: first.value, name: second.value };
    end = second.end;
  }
  const rest = argument.slice(end);
  if (rest !== "" && !/^\s/.test(rest))
    return consoleSyntaxError("WHERE IS could not read the table name", SYNTAX, EXAMPLE);
  const keyText = rest.trim();
  if (keyText === "")
    return consoleSyntaxError(`WHERE IS needs a key after the table ${table.name}`, SYNTAX, EXAMPLE);
  const key = readKey(keyText);
  if (key === undefined)
    return consoleSyntaxError(
      "WHERE IS reads one key: quote a key that holds spaces or quotes",
      SYNTAX,
      EXAMPLE,
    );
  return { table, key };
}

/** The table's placement as the planner resolves it: configured, a system catalog, or the default. */
function placementOf(table: TableName, ctx: ConsoleContext): { name: string; placed: Placed } | undefined {
  const tables = ctx.topology.tables;
  let policy: TablePolicy | undefined;
  if (table.schema !== undefined) policy = tables.get(`${table.schema}.${table.name}`);
  if (policy === undefined && (table.schema === undefined || table.schema === "public"))
    policy = tables.get(table.name);
  if (policy !== undefined) {
    switch (policy.placement) {
      case "geo_partitioned":
        return { name: policy.table, placed: { placement: "geo_partitioned" } };
      case "global_replicated":
        return { name: policy.table, placed: { placement: "global_replicated" } };
      case "pinned":
        return { name: policy.table, placed: { placement: "pinned", region: policy.region } };
    }
  }
  const name = table.schema === undefined ? table.name : `${table.schema}.${table.name}`;
  if (
    (table.schema !== undefined && CATALOG_SCHEMAS.has(table.schema)) ||
    (table.schema === undefined && table.name.startsWith("pg_"))
  ) {
    return { name, placed: { placement: "global_replicated" } };
  }
  const fallback = ctx.topology.routing.defaultPlacement;
  if (fallback === undefined) return undefined;
  switch (fallback.placement) {
    case "global_replicated":
      return { name, placed: { placement: "global_replicated" } };
    case "pinned":
      return { name, placed: { placement: "pinned", region: fallback.region } };
  }
}

/**
 * `WHERE IS <table> <key>`: the region that holds (or would hold) the key's rows of that table,
 * answered from the live directory and placement without touching any region.
 */
export const whereIs: ConsoleHandler = {
  syntax: SYNTAX,
  run(argument, ctx) {
    const parsed = parseArgument(argument);
    if (parsed instanceof PgError) return parsed;
    const found = placementOf(parsed.table, ctx);
    if (found === undefined) {
      const name =
        parsed.table.schema === undefined ? parsed.table.name : `${parsed.table.schema}.${parsed.table.name}`;
      return unknownConsoleTable(name, [...ctx.topology.tables.keys()].sort());
    }
    const keyType = ctx.topology.routing.keyType;
    if (keyType === "integer" && !INTEGER.test(parsed.key.trim())) return invalidIntegerKey(parsed.key);
    const key = canonicalKey(parsed.key, keyType);
    const placed = found.placed;
    let region: string;
    let state: WhereIsState;
    switch (placed.placement) {
      case "geo_partitioned": {
        region = placeKey(key, keyType, ctx.topology, ctx.directory);
        state = ctx.directory.lookup(key) === undefined ? "placed by hash" : "resident";
        break;
      }
      case "global_replicated":
        region = ctx.topology.regionIds.join(", ");
        state = "replicated";
        break;
      case "pinned":
        region = placed.region;
        state = "pinned";
        break;
    }
    return selectRows(WHERE_IS_COLUMNS, [[found.name, key, region, state]]);
  },
};
