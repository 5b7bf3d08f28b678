import type {
  Analysis,
  BlockRole,
  CrossJoin,
  IdColumn,
  InsertRows,
  KeyConstraint,
  KeyLink,
  KeyValue,
  MergePlan,
  QueryBlock,
  StatementKind,
  TableChange,
  TableRef,
} from "@geo/sql";

/** Hand-built analyses, so planner rules are tested apart from the analyser. */
export interface TableSpec {
  name: string;
  schema?: string;
  access?: "read" | "write";
  block?: number;
  key?: KeyConstraint;
}

export const any: KeyConstraint = { kind: "any" };

export function lit(text: string): KeyValue {
  return { kind: "literal", type: "string", text };
}

export function param(index: number): KeyValue {
  return { kind: "param", index };
}

export function keys(...values: (string | KeyValue)[]): KeyConstraint {
  return { kind: "values", values: values.map((value) => (typeof value === "string" ? lit(value) : value)) };
}

export const concat: MergePlan = {
  tier: "concat",
  regionSql: "<region sql>",
  limit: undefined,
  movesRowData: false,
};

export function gatherOf(tables: number[]): MergePlan & { tier: "gather" } {
  return {
    tier: "gather",
    sources: tables.map((table) => ({ table, regionSql: `<rows of ${table}>`, columns: "all" as const })),
    reason: "a join on columns other than the key",
    firstParam: 1,
    render: () => "<home sql>",
    movesRowData: true,
  };
}

export function analysis(spec: {
  kind?: StatementKind;
  text?: string;
  readOnly?: boolean;
  tables?: TableSpec[];
  links?: KeyLink[];
  crossJoins?: CrossJoin[];
  blocks?: { parent?: number; role: BlockRole }[];
  insert?: { table: number; rowKeys: (KeyValue | undefined)[] };
  merge?: MergePlan;
  /** The gather fallback; refused unless given. */
  gather?: MergePlan & { tier: "gather" | "refused" };
  mergeActions?: ("update" | "delete" | "insert" | "nothing")[];
  hints?: { key?: string; region?: string; primary?: boolean };
  assignsKey?: boolean;
  volatileFunctions?: string[];
  writingCte?: boolean;
  command?: string;
  idColumns?: IdColumn[];
  tableChanges?: TableChange[];
}): Analysis {
  const kind = spec.kind ?? "select";
  const tables: TableRef[] = (spec.tables ?? []).map((table) => ({
    name: table.name,
    ...(table.schema === undefined ? {} : { schema: table.schema }),
    only: false,
    block: table.block ?? 0,
    access: table.access ?? "read",
    key: table.key ?? any,
  }));
  const blocks: QueryBlock[] = (spec.blocks ?? [{ role: "top" as BlockRole }]).map((block, id) => ({
    id,
    parent: block.parent,
    role: block.role,
    correlated: false,
    aggregates: false,
    writes: false,
  }));
  const insert: InsertRows | undefined =
    spec.insert === undefined
      ? undefined
      : {
          table: spec.insert.table,
          rowKeys: spec.insert.rowKeys,
          onConflict: "none",
          split: (rows) => `INSERT rows ${rows.join(",")}`,
        };
  const readOnly = spec.readOnly ?? kind === "select";
  return {
    text: spec.text ?? `<${kind}>`,
    ...(spec.idColumns === undefined ? {} : { idColumns: spec.idColumns }),
    ...(spec.tableChanges === undefined ? {} : { tableChanges: spec.tableChanges }),
    kind,
    command: spec.command ?? kind.toUpperCase(),
    readOnly,
    needsPrimary: readOnly ? undefined : "writes",
    sessionEffects: [],
    blocks,
    tables,
    links: spec.links ?? [],
    crossJoins: spec.crossJoins ?? [],
    flags: {
      assignsKey: spec.assignsKey ?? false,
      volatileFunctions: spec.volatileFunctions ?? [],
      userFunctions: [],
      locking: undefined,
      selectInto: false,
      writingCte: spec.writingCte ?? false,
      returning: false,
    },
    ...(insert === undefined ? {} : { insert }),
    hints: { primary: spec.hints?.primary ?? false, ...spec.hints },
    paramCount: 0,
    merge: spec.merge ?? concat,
    gather: spec.gather ?? {
      tier: "refused",
      sqlstate: "0A000",
      reason: "the statement writes or locks",
      hint: "constrain it to one region",
      movesRowData: false,
    },
    ...(spec.mergeActions === undefined ? {} : { mergeActions: spec.mergeActions }),
  };
}
