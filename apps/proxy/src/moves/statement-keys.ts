import { type Directory, type ParamValue, parseArrayLiteral, type Topology } from "@geo/core";
import type { Analysis, KeyValue } from "@geo/sql";
import type { Touch } from "./hold-registry.js";

/** The keys a statement touches, and those of its inserted rows the directory does not list. */
export interface StatementKeys {
  readonly touch: Touch;
  /** Keys of INSERT rows (or a key= hint on an INSERT) with no directory entry: first writes. */
  readonly newKeys: readonly string[];
  /** Keys read or changed (not inserted) that have no directory entry: looked for in every region. */
  readonly unlisted: readonly string[];
}

const NONE: StatementKeys = { touch: { kind: "none" }, newKeys: [], unlisted: [] };
const ANY: Touch = { kind: "any" };

/**
 * What a statement touches, over-approximated as routing is: a geo-partitioned table whose key is
 * unconstrained, a parameter not bound yet, or a statement the parser could not read touches any
 * key. `params`: the bound values, `$1` first, when there are any.
 */
export function statementKeys(
  analysis: Analysis,
  topology: Topology,
  directory: Directory,
  canonical: (key: string) => string,
  params?: readonly ParamValue[],
): StatementKeys {
  if (analysis.unparsed === true) return { ...NONE, touch: ANY };
  const geo = analysis.tables.map((ref) => {
    const policy =
      topology.tables.get(ref.schema === undefined ? ref.name : `${ref.schema}.${ref.name}`) ??
      topology.tables.get(ref.name);
    return policy?.placement === "geo_partitioned";
  });
  if (!geo.some(Boolean)) return NONE;
  const keys = new Set<string>();
  const hinted = analysis.hints.key;
  const insertTable = analysis.insert?.table;
  const inserted = new Set<string>();
  let any = false;
  const add = (value: KeyValue, into: Set<string>): void => {
    for (const key of valuesOf(value, params)) {
      if (key === undefined) any = true;
      else if (key !== null) into.add(canonical(key));
    }
  };
  if (hinted !== undefined) {
    keys.add(canonical(hinted));
    if (analysis.kind === "insert") inserted.add(canonical(hinted));
  } else {
    for (const [index, ref] of analysis.tables.entries()) {
      if (!geo[index]) continue;
      if (analysis.kind === "ddl") any = true;
      if (index === insertTable && analysis.insert !== undefined) {
        for (const rowKey of analysis.insert.rowKeys) {
          if (rowKey === undefined) any = true;
          else add(rowKey, inserted);
        }
        continue;
      }
      if (ref.key.kind === "any") any = true;
      else for (const value of ref.key.values) add(value, keys);
    }
  }
  for (const key of inserted) keys.add(key);
  const touch: Touch = any ? ANY : { kind: "keys", keys: [...keys] };
  const newKeys = [...inserted].filter((key) => directory.lookup(key) === undefined);
  const unlisted = [...keys].filter((key) => !inserted.has(key) && directory.lookup(key) === undefined);
  return { touch, newKeys, unlisted };
}

/** The key values one constraint stands for: undefined where unknown (unbound), null for NULL. */
function valuesOf(value: KeyValue, params: readonly ParamValue[] | undefined): (string | null | undefined)[] {
  switch (value.kind) {
    case "literal":
      return [value.type === "null" ? null : value.text];
    case "param": {
      if (params === undefined) return [undefined];
      const bound = params[value.index - 1];
      if (bound === undefined || bound === null) return [null];
      return typeof bound === "string" ? [bound] : [undefined];
    }
    case "param-array": {
      if (params === undefined) return [undefined];
      const bound = params[value.index - 1];
      if (bound === undefined || bound === null) return [null];
      const items = typeof bound === "string" ? parseArrayLiteral(bound) : bound;
      return items === undefined ? [undefined] : [...items];
    }
  }
}

/**
 * A statement that can only read: a plain SELECT a replica could run, locking nothing and calling
 * no function that might write. A move's hold lets it through while the move copies.
 */
export function readsOnly(analysis: Analysis): boolean {
  return (
    analysis.kind === "select" &&
    analysis.readOnly &&
    analysis.needsPrimary === undefined &&
    analysis.flags.locking === undefined &&
    analysis.flags.userFunctions.length === 0 &&
    analysis.flags.volatileFunctions.length === 0
  );
}
