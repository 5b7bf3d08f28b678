import { cloneTree, type Node, nodeAs, type RangeVar } from "./ast.js";
import { columnRef, deparse, integerConst, resTarget, typeCast, typeNameNode } from "./deparse.js";
import { parseOne } from "./parser.js";

/** One read a write needs first: a standalone SELECT, and what its answer replaces. */
export interface WritePreread {
  readonly sql: string;
  /** A whole table of the FROM/USING list (shipped as `SELECT *`), a sub-query, or an INSERT's source. */
  readonly role: "table" | "subquery" | "insert-source";
}

/** A pre-read's answer: its columns as PostgreSQL described them, and its rows as text. */
export interface PrereadAnswer {
  readonly columns: readonly { readonly name: string; readonly type: string }[];
  readonly rows: readonly (readonly (string | null)[])[];
}

/**
 * A write whose sub-queries (or FROM/USING tables, or INSERT source) are read before it runs:
 * the reads, and the write with each one replaced by its answer as typed constants.
 */
export interface WritePrereads {
  readonly reads: readonly WritePreread[];
  render(answers: readonly PrereadAnswer[]): string;
}

interface Site {
  readonly read: WritePreread;
  /** Replaces the site in a copy of the tree (found again by its path). */
  readonly path: readonly (string | number)[];
  readonly alias?: string | undefined;
}

/**
 * The reads of a write that can run before it: each sub-query (an expression sub-query anywhere,
 * a derived table of UPDATE ... FROM / DELETE ... USING), each table of those lists other than the
 * one written, and the source query of INSERT ... SELECT. Run on their own, they give the rows the
 * write would read; the write is then run with those rows written in as constants (a VALUES list
 * whose values are cast to the exact type PostgreSQL described), so it reads nothing outside the
 * regions it writes. Undefined when there is nothing to read first (or a WITH clause, whose
 * queries a sub-query may name).
 *
 * A sub-query that refers to the written row (correlated) cannot run on its own: PostgreSQL then
 * fails the read with 42P01 or 42703, and the caller keeps the original plan. PostgreSQL resolves
 * an unqualified name to the innermost relation that has it, so a read that runs on its own
 * reads what it read inside the write.
 *
 * @example
 * const p = writePrereads("UPDATE users SET age = (SELECT count(*) FROM orders) WHERE tenant_id = 'a'");
 * p.reads; // [{ sql: "SELECT count(*) FROM orders", role: "subquery" }]
 * p.render([{ columns: [{ name: "count", type: "bigint" }], rows: [["42"]] }]);
 * // UPDATE users SET age = (SELECT v.c1 AS count FROM (VALUES ('42'::bigint, 1)) v(c1, n) ORDER BY v.n) ...
 */
export function writePrereads(text: string): WritePrereads | undefined {
  const tree = parseOne(text);
  if (tree === undefined) return undefined;
  const sites = sitesOf(tree);
  if (sites === undefined || sites.length === 0) return undefined;
  return {
    reads: sites.map((site) => site.read),
    render(answers: readonly PrereadAnswer[]): string {
      const copy = cloneTree(tree);
      sites.forEach((site, i) => {
        const answer = answers[i];
        if (answer === undefined) throw new RangeError(`no answer for pre-read ${i}`);
        replaceAt(copy, site, answer);
      });
      return deparse(copy);
    },
  };
}

function sitesOf(tree: Node): Site[] | undefined {
  const [tag] = Object.keys(tree);
  const body = (tree as unknown as Record<string, Record<string, unknown>>)[tag ?? ""];
  if (body === undefined) return undefined;
  if (tag !== "UpdateStmt" && tag !== "DeleteStmt" && tag !== "InsertStmt") return undefined;
  if (body.withClause !== undefined) return undefined;
  const sites: Site[] = [];
  const root: (string | number)[] = [tag];
  if (tag === "InsertStmt") {
    const source = nodeAs(body.selectStmt as Node | undefined, "SelectStmt");
    if (source !== undefined && source.valuesLists === undefined && readsATable(source)) {
      if (source.withClause !== undefined) return undefined;
      sites.push({
        read: { sql: deparse({ SelectStmt: source } as Node), role: "insert-source" },
        path: [...root, "selectStmt"],
      });
    } else {
      collectSubLinks(body.selectStmt, [...root, "selectStmt"], sites);
    }
    collectSubLinks(body.onConflictClause, [...root, "onConflictClause"], sites);
    collectSubLinks(body.returningList, [...root, "returningList"], sites);
    return sites;
  }
  const listKey = tag === "UpdateStmt" ? "fromClause" : "usingClause";
  const items = (body[listKey] as Node[] | undefined) ?? [];
  for (const [i, item] of items.entries()) {
    if (!collectFromItem(item, [...root, listKey, i], sites)) return undefined;
  }
  for (const key of ["targetList", "whereClause", "returningList"])
    collectSubLinks(body[key], [...root, key], sites);
  return sites;
}

/** A FROM/USING item: tables and derived tables are read first; joins are walked. */
function collectFromItem(item: Node, path: (string | number)[], sites: Site[]): boolean {
  const range = nodeAs(item, "RangeVar");
  if (range !== undefined) {
    const alias = range.alias?.aliasname ?? range.relname;
    const bare: RangeVar = { ...range };
    delete bare.alias;
    sites.push({
      read: {
        sql: deparse({
          SelectStmt: {
            targetList: [resTarget({ ColumnRef: { fields: [{ A_Star: {} }] } } as Node)],
            fromClause: [{ RangeVar: bare }],
            limitOption: "LIMIT_OPTION_DEFAULT",
            op: "SETOP_NONE",
          },
        } as Node),
        role: "table",
      },
      path,
      alias,
    });
    return range.alias?.colnames === undefined;
  }
  const sub = nodeAs(item, "RangeSubselect");
  if (sub !== undefined) {
    if (sub.lateral === true) return false;
    sites.push({
      read: { sql: deparse(sub.subquery as Node), role: "subquery" },
      path: [...path, "RangeSubselect", "subquery"],
    });
    return true;
  }
  const join = nodeAs(item, "JoinExpr");
  if (join !== undefined) {
    if (join.usingClause !== undefined || join.isNatural === true) return false;
    if (!collectFromItem(join.larg as Node, [...path, "JoinExpr", "larg"], sites)) return false;
    if (!collectFromItem(join.rarg as Node, [...path, "JoinExpr", "rarg"], sites)) return false;
    collectSubLinks(join.quals, [...path, "JoinExpr", "quals"], sites);
    return true;
  }
  // A function or VALUES in the list reads no table.
  return nodeAs(item, "RangeFunction") !== undefined;
}

/** Every outermost expression sub-query under `value` that reads a table. */
function collectSubLinks(value: unknown, path: (string | number)[], sites: Site[]): void {
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const [i, child] of value.entries()) collectSubLinks(child, [...path, i], sites);
    return;
  }
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    if (key === "SubLink") {
      const select = (child as { subselect?: Node }).subselect;
      if (select !== undefined && readsATable(select)) {
        sites.push({
          read: { sql: deparse(select), role: "subquery" },
          path: [...path, "SubLink", "subselect"],
        });
        continue;
      }
    }
    collectSubLinks(child, [...path, key], sites);
  }
}

function readsATable(tree: unknown): boolean {
  if (tree === null || typeof tree !== "object") return false;
  if (Array.isArray(tree)) return tree.some(readsATable);
  for (const [key, value] of Object.entries(tree as Record<string, unknown>)) {
    if (key === "RangeVar") return true;
    if (readsATable(value)) return true;
  }
  return false;
}

function replaceAt(tree: Node, site: Site, answer: PrereadAnswer): void {
  let parent: Record<string | number, unknown> = tree as unknown as Record<string, unknown>;
  for (const step of site.path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  const last = site.path[site.path.length - 1]!;
  switch (site.read.role) {
    case "insert-source":
      parent[last] = valuesList(answer);
      return;
    case "subquery":
      parent[last] = orderedConstants(answer);
      return;
    case "table":
      parent[last] = {
        RangeSubselect: { subquery: orderedConstants(answer), alias: { aliasname: site.alias } },
      };
      return;
  }
}

function constant(value: string | null, type: string): Node {
  const literal: Node =
    value === null ? { A_Const: { isnull: true } } : ({ A_Const: { sval: { sval: value } } } as Node);
  return typeCast(literal, typeNameNode(type));
}

/** An INSERT's rows: `VALUES ('v'::t, ...), ...`, one row per answered row, in its order. */
function valuesList(answer: PrereadAnswer): Node {
  if (answer.rows.length === 0) return orderedConstants(answer);
  return {
    SelectStmt: {
      valuesLists: answer.rows.map((row) => ({
        List: { items: row.map((value, c) => constant(value, answer.columns[c]!.type)) },
      })),
      limitOption: "LIMIT_OPTION_DEFAULT",
      op: "SETOP_NONE",
    },
  } as Node;
}

/** The column holding each row's place in the answer. */
const ORDINAL = "__geo_ordinal";

/**
 * The answer as a query with the answer's column names, in its order (ORDER BY an ordinal, so an
 * ARRAY(...) or a LIMIT over it reads the rows as the sub-query returned them). The names are
 * given by the VALUES alias and read back as plain column references (the deparser prints a
 * named select-list entry inside UPDATE as an assignment). With no rows: one row of NULLs of the
 * answer's types, filtered out, so the columns keep their types.
 */
function orderedConstants(answer: PrereadAnswer): Node {
  const width = answer.columns.length;
  const given = answer.columns.map((c) => c.name);
  const unique = new Set(given).size === given.length && !given.includes(ORDINAL);
  const names = unique ? given : given.map((_, c) => `c${c + 1}`);
  const rows: readonly (readonly (string | null)[])[] =
    answer.rows.length === 0 ? [answer.columns.map(() => null)] : answer.rows;
  return {
    SelectStmt: {
      targetList: names.map((name) => resTarget(columnRef("v", name))),
      fromClause: [
        {
          RangeSubselect: {
            subquery: {
              SelectStmt: {
                valuesLists: rows.map((row, r) => ({
                  List: {
                    items: [
                      ...row.slice(0, width).map((value, c) => constant(value, answer.columns[c]!.type)),
                      integerConst(r + 1),
                    ],
                  },
                })),
                limitOption: "LIMIT_OPTION_DEFAULT",
                op: "SETOP_NONE",
              },
            },
            alias: { aliasname: "v", colnames: [...names, ORDINAL].map((sval) => ({ String: { sval } })) },
          },
        },
      ],
      ...(answer.rows.length === 0 ? { whereClause: { A_Const: { boolval: {} } } } : {}),
      sortClause: [
        {
          SortBy: {
            node: columnRef("v", ORDINAL),
            sortby_dir: "SORTBY_DEFAULT",
            sortby_nulls: "SORTBY_NULLS_DEFAULT",
          },
        },
      ],
      limitOption: "LIMIT_OPTION_DEFAULT",
      op: "SETOP_NONE",
    },
  } as Node;
}
