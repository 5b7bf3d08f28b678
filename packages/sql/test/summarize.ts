import type { Analysis, KeyConstraint, KeyValue } from "../src/index.js";

/** A compact, readable form of an analysis, so expectations fit on one line per statement. */
export interface Summary {
  kind: string;
  command: string;
  readOnly: boolean;
  primary: string | null;
  tables: string[];
  keys: string[];
  links: string[];
  cross: string[];
  roles: string[];
  correlated: number[];
  aggregates: number[];
  assignsKey: boolean;
  locking: string | null;
  volatile: string[];
  writingCte: boolean;
  selectInto: boolean;
  returning: boolean;
  tx: string | null;
  effects: string[];
  hints: string;
  rows: string[] | null;
  params: number;
  console: string | null;
  merge: string;
  gather: string;
  moves: boolean;
  explain: string | null;
  /** `<name> tables|everywhere [outside-block]`. */
  maintenance: string | null;
}

export function formatValue(v: KeyValue): string {
  const cast = v.cast === undefined ? "" : `::${v.cast}`;
  switch (v.kind) {
    case "literal":
      return (v.type === "string" ? `'${v.text}'` : v.type === "bit-string" ? `b:${v.text}` : v.text) + cast;
    case "param":
      return `$${v.index}${cast}`;
    case "param-array":
      return `$${v.index}[]${cast}`;
  }
}

export function formatKey(k: KeyConstraint): string {
  if (k.kind === "any") return "any";
  if (k.values.length === 0) return "none";
  return k.values.map(formatValue).join(",");
}

export function summarize(a: Analysis): Summary {
  const tx = a.transaction;
  return {
    kind: a.kind,
    command: a.command,
    readOnly: a.readOnly,
    primary: a.needsPrimary ?? null,
    tables: a.tables.map(
      (t) =>
        `${t.schema === undefined ? "" : `${t.schema}.`}${t.name}${t.alias === undefined ? "" : `:${t.alias}`}@${t.block}${t.access === "write" ? " w" : ""}${t.only ? " only" : ""}`,
    ),
    keys: a.tables.map((t) => (t.keyColumn === undefined ? "-" : formatKey(t.key))),
    links: a.links.map((l) => `${l.left}-${l.right}`),
    cross: a.crossJoins.map((c) => `${c.left}-${c.right}`),
    roles: a.blocks.map((b) => b.role),
    correlated: a.blocks.filter((b) => b.correlated).map((b) => b.id),
    aggregates: a.blocks.filter((b) => b.aggregates).map((b) => b.id),
    assignsKey: a.flags.assignsKey,
    locking: a.flags.locking ?? null,
    volatile: [...a.flags.volatileFunctions],
    writingCte: a.flags.writingCte,
    selectInto: a.flags.selectInto,
    returning: a.flags.returning,
    tx:
      tx === undefined
        ? null
        : [
            tx.action,
            tx.isolation,
            tx.readOnly === undefined ? undefined : tx.readOnly ? "read-only" : "read-write",
            tx.deferrable === true ? "deferrable" : undefined,
            tx.name,
            tx.chain === true ? "chain" : undefined,
          ]
            .filter((x) => x !== undefined)
            .join(" "),
    effects: a.sessionEffects.map((e) =>
      [e.kind, e.local ? "local" : undefined, e.name, e.value === undefined ? undefined : `=${e.value}`]
        .filter((x) => x !== undefined)
        .join(" "),
    ),
    hints: [
      a.hints.key === undefined ? "" : `key=${a.hints.key}`,
      a.hints.region === undefined ? "" : `region=${a.hints.region}`,
      a.hints.primary ? "primary" : "",
    ]
      .filter((x) => x !== "")
      .join(" "),
    rows:
      a.insert === undefined ? null : a.insert.rowKeys.map((k) => (k === undefined ? "?" : formatValue(k))),
    params: a.paramCount,
    console:
      a.console === undefined
        ? null
        : `${a.console.command}${a.console.argument === "" ? "" : `: ${a.console.argument}`}`,
    merge: a.merge.tier,
    gather: a.gather.tier,
    moves: a.merge.movesRowData,
    explain: a.explain === undefined ? null : a.explain.analyze ? "analyze" : "plan",
    maintenance:
      a.maintenance === undefined
        ? null
        : `${a.maintenance.name} ${a.maintenance.scope}${a.maintenance.outsideBlock ? " outside-block" : ""}${a.maintenance.blockOnly === true ? " block-only" : ""}`,
  };
}

/** One row of the statement table: the SQL and the parts of its summary that must hold. */
export interface Case {
  readonly sql: string;
  readonly expect: Partial<Summary>;
}

/** A statement that must be refused by analysis with this SQLSTATE (and, optionally, error code). */
export interface ErrorCase {
  readonly sql: string;
  readonly sqlstate: string;
  readonly code: string;
  readonly position?: number;
}

export const KEYS: ReadonlyMap<string, string> = new Map([
  ["users", "tenant_id"],
  ["orders", "tenant_id"],
  ["payments", "tenant_id"],
  ["shop.items", "tenant_id"],
  ["accounts", "id"],
]);

export const AGGREGATES: ReadonlySet<string> = new Set(["my_median"]);
