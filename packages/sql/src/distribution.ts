import { type Node, nodeAs, type SelectStmt, tagOf, type WithClause } from "./ast.js";
import type { WalkResult } from "./statement-walker.js";

/**
 * Where the rows of a relation live when a statement runs in every region at once.
 *
 * - `partitioned`: each row is in exactly one region (a geo-partitioned table, or anything built
 *   row by row from one: a join with replicated rows, a filter, a projection).
 * - `everywhere`: the same rows in every region (a table with no shard key in the analyser's
 *   schema, a VALUES list, a function in FROM, a query with no FROM, a sub-query over only those).
 * - `unknown`: neither can be proven (a relation built by an operator whose rule failed).
 *
 * Run in each region and concatenated, a query block gives one server's answer only when its
 * output is `partitioned`: every row then comes from the one region that holds it. Rows that are
 * `everywhere` come back once per region; `unknown` rows are never pushed.
 *
 * The pinned placement is decided by the planner (it knows placements, the analyser only shard
 * keys); a table without a key is taken to be `everywhere` here, which is the stricter reading:
 * the planner in turn refuses to run a pinned table beside geo rows of other regions.
 */
export type Distribution = "partitioned" | "everywhere" | "unknown";

/** Every operator rule that can prove a block is not exact when run per region. */
export const DISTRIBUTION_RULES = {
  "outer-join-preserves-everywhere": {
    reason:
      "rows that are the same in every region (a table without a shard key, VALUES or a function) are kept by an outer join with geo-partitioned rows, so each region would return the unmatched ones",
    hint: "constrain the geo-partitioned side to one key, or join from the geo-partitioned side (or an inner join)",
  },
  "sub-query-beside-everywhere": {
    reason:
      "a sub-query over geo-partitioned rows is evaluated for rows that are the same in every region (a table without a shard key, VALUES, a function, or a SELECT with no FROM), so each region would answer for its own share",
    hint: "constrain the sub-query to one key, or compute the sub-query first and pass its result as a parameter",
  },
  "set-operation-mixes-everywhere": {
    reason:
      "a set operation combines rows that are the same in every region with geo-partitioned rows, so each region would return the shared rows",
    hint: "constrain the geo-partitioned operand to one key, or run the operands as separate statements",
  },
  "recursive-cte-over-partitioned": {
    reason:
      "a recursive WITH query over geo-partitioned rows would stop at each region's boundary when run in each region alone",
    hint: "constrain every table of the recursive query to keys of one region, or send it to one region with /* geo: region=<id> */",
  },
  "function-over-partitioned": {
    reason: "a function in FROM takes its arguments from a sub-query over geo-partitioned rows",
    hint: "constrain the sub-query to one key, or compute it first and pass its result as a parameter",
  },
  "cte-read-twice": {
    reason:
      "a WITH query over geo-partitioned rows is read more than once, so each region would pair or compare only its own rows of it",
    hint: "join the tables themselves on their shard key instead of reading the WITH query twice, or constrain it to one key",
  },
  "everywhere-output": {
    reason:
      "the statement returns rows that are the same in every region while reading geo-partitioned rows elsewhere, so each region would return them",
    hint: "constrain the statement to one key so one region answers",
  },
} as const satisfies Record<string, { readonly reason: string; readonly hint: string }>;

export type DistributionRule = keyof typeof DISTRIBUTION_RULES;

export interface DistributionViolation {
  readonly rule: DistributionRule;
  /** The query block (index into the walk's blocks) where the rule failed, when known. */
  readonly block: number | undefined;
}

export interface DistributionVerdict {
  /** The statement's own output. */
  readonly top: Distribution;
  /** Every rule that failed, in the order met (empty: pushing the statement to regions is exact). */
  readonly violations: readonly DistributionViolation[];
}

// ---------------------------------------------------------------------------------------------
// The operator rules, each a function of its inputs' distributions
// ---------------------------------------------------------------------------------------------

export type JoinKind = "inner" | "left" | "right" | "full";

/** Join, cross join and comma: returns the output's distribution, or the rule that failed. */
export function joinRule(
  left: Distribution,
  right: Distribution,
  kind: JoinKind,
): Distribution | DistributionRule {
  if (left === "unknown" || right === "unknown") return "unknown";
  const preservedEverywhere =
    ((kind === "left" || kind === "full") && left === "everywhere" && right === "partitioned") ||
    ((kind === "right" || kind === "full") && right === "everywhere" && left === "partitioned");
  if (preservedEverywhere) return "outer-join-preserves-everywhere";
  // Inner joins meet a partitioned row with shared rows in its own region only; two partitioned
  // sides must meet by key, which the planner checks (or gathers).
  return left === "partitioned" || right === "partitioned" ? "partitioned" : "everywhere";
}

/** A sub-query (EXISTS, IN, scalar, ANY/ALL) evaluated for each row of a relation. */
export function subQueryRule(outer: Distribution, inner: Distribution): Distribution | DistributionRule {
  if (outer === "unknown") return "unknown";
  if (inner === "everywhere") return outer;
  // Partitioned outer rows meet the sub-query's rows in their own region only: the planner checks
  // that they meet by key (or gathers), and the row-set rules check aggregates and LIMITs.
  if (outer === "partitioned") return "partitioned";
  return "sub-query-beside-everywhere";
}

/** UNION [ALL], INTERSECT, EXCEPT of two operands. */
export function setOperationRule(left: Distribution, right: Distribution): Distribution | DistributionRule {
  if (left === "unknown" || right === "unknown") return "unknown";
  if (left !== right) return "set-operation-mixes-everywhere";
  return left;
}

/** A WITH query; a recursive one over partitioned rows is never run per region. */
export function cteRule(body: Distribution, recursive: boolean): Distribution | DistributionRule {
  if (recursive && body !== "everywhere") return "recursive-cte-over-partitioned";
  return body;
}

/** The statement's own output. */
export function outputRule(top: Distribution, readsPartitioned: boolean): Distribution | DistributionRule {
  if (top === "everywhere" && readsPartitioned) return "everywhere-output";
  return top;
}

function isRule(value: Distribution | DistributionRule): value is DistributionRule {
  return value in DISTRIBUTION_RULES;
}

// ---------------------------------------------------------------------------------------------
// The walk over a parse tree
// ---------------------------------------------------------------------------------------------

interface CteEntry {
  readonly distribution: Distribution;
  /** How many times the statement reads it so far. */
  reads: number;
}

type Env = ReadonlyMap<string, CteEntry>;

class DistributionWalk {
  readonly violations: DistributionViolation[] = [];
  readonly #blockOf = new Map<SelectStmt, number>();
  readonly #occurrenceOf = new Map<object, number>();
  readonly #walk: WalkResult;

  constructor(walk: WalkResult) {
    this.#walk = walk;
    for (const block of walk.blocks) {
      const select = nodeAs(block.statement, "SelectStmt");
      if (select !== undefined) this.#blockOf.set(select, block.id);
    }
    walk.occurrences.forEach((o, i) => {
      this.#occurrenceOf.set(o.rangeVar, i);
    });
  }

  #apply(result: Distribution | DistributionRule, block: number | undefined): Distribution {
    if (!isRule(result)) return result;
    this.violations.push({ rule: result, block });
    return "unknown";
  }

  select(stmt: SelectStmt, env: Env): Distribution {
    const block = this.#blockOf.get(stmt);
    const inner = this.#with(stmt.withClause, env, block);
    const op = stmt.op ?? "SETOP_NONE";
    if (op !== "SETOP_NONE") {
      const left = stmt.larg === undefined ? "everywhere" : this.select(stmt.larg, inner);
      const right = stmt.rarg === undefined ? "everywhere" : this.select(stmt.rarg, inner);
      const combined = this.#apply(setOperationRule(left, right), block);
      return this.#subQueries(combined, [stmt.sortClause, stmt.limitCount, stmt.limitOffset], inner, block);
    }
    let from: Distribution = "everywhere";
    for (const item of stmt.fromClause ?? []) {
      from = this.#apply(joinRule(from, this.#fromItem(item, inner, block), "inner"), block);
    }
    return this.#subQueries(
      from,
      [
        stmt.valuesLists,
        stmt.targetList,
        stmt.whereClause,
        stmt.groupClause,
        stmt.havingClause,
        stmt.windowClause,
        stmt.sortClause,
        stmt.distinctClause,
        stmt.limitCount,
        stmt.limitOffset,
      ],
      inner,
      block,
    );
  }

  #with(withClause: WithClause | undefined, env: Env, block: number | undefined): Env {
    if (withClause === undefined) return env;
    const out = new Map(env);
    for (const c of withClause.ctes ?? []) {
      const cte = nodeAs(c, "CommonTableExpr");
      const name = cte?.ctename;
      const query = nodeAs(cte?.ctequery, "SelectStmt");
      if (cte === undefined || name === undefined) continue;
      if (query === undefined) {
        // A writing WITH query (refused elsewhere across regions): its RETURNING rows are the target's.
        out.set(name, { distribution: "unknown", reads: 0 });
        continue;
      }
      const recursive = withClause.recursive === true && refersTo(query, name);
      // A recursive query reads its own rows while its body is walked: they are what its
      // non-recursive part starts from, so over constants alone it stays `everywhere`.
      const scope = recursive
        ? new Map([...out, [name, { distribution: "everywhere" as Distribution, reads: 0 }]])
        : out;
      const before = this.violations.length;
      const body = this.select(query, scope);
      const result = cteRule(body, recursive);
      const cteBlock = this.#blockOf.get(query) ?? block;
      if (isRule(result)) {
        // The recursion is the reason to name: the body's own failures follow it.
        this.violations.splice(before, 0, { rule: result, block: cteBlock });
        out.set(name, { distribution: "unknown", reads: 0 });
      } else out.set(name, { distribution: result, reads: 0 });
    }
    return out;
  }

  #fromItem(item: Node, env: Env, block: number | undefined): Distribution {
    switch (tagOf(item)) {
      case "RangeVar": {
        const rv = nodeAs(item, "RangeVar");
        if (rv === undefined) return "unknown";
        if (rv.schemaname === undefined) {
          const cte = env.get(rv.relname ?? "");
          if (cte !== undefined) {
            // Read twice, each region would meet only its own rows of it: as two tables joined
            // off their key, which the per-table checks cannot see through one WITH name.
            cte.reads++;
            if (cte.reads > 1 && cte.distribution !== "everywhere")
              return this.#apply("cte-read-twice", block);
            return cte.distribution;
          }
        }
        return this.#table(rv);
      }
      case "RangeTableSample": {
        const rv = nodeAs(nodeAs(item, "RangeTableSample")?.relation, "RangeVar");
        return rv === undefined ? "unknown" : this.#table(rv);
      }
      case "RangeSubselect": {
        const sub = nodeAs(nodeAs(item, "RangeSubselect")?.subquery, "SelectStmt");
        return sub === undefined ? "unknown" : this.select(sub, env);
      }
      case "RangeFunction": {
        const fn = nodeAs(item, "RangeFunction");
        // A function over constants or over columns of other FROM items gives the same rows
        // wherever those rows are; one fed by a sub-query over partitioned rows does not.
        const shared = ownSubLinks([fn?.functions]).every((link) => {
          const sub = nodeAs(link.subselect, "SelectStmt");
          return sub === undefined || this.select(sub, env) === "everywhere";
        });
        return shared ? "everywhere" : this.#apply("function-over-partitioned", block);
      }
      case "JoinExpr": {
        const je = nodeAs(item, "JoinExpr");
        if (je === undefined) return "unknown";
        const left = je.larg === undefined ? "everywhere" : this.#fromItem(je.larg, env, block);
        const right = je.rarg === undefined ? "everywhere" : this.#fromItem(je.rarg, env, block);
        const kind: JoinKind =
          je.jointype === "JOIN_LEFT"
            ? "left"
            : je.jointype === "JOIN_RIGHT"
              ? "right"
              : je.jointype === "JOIN_FULL"
                ? "full"
                : "inner";
        const joined = this.#apply(joinRule(left, right, kind), block);
        return this.#subQueries(joined, [je.quals], env, block);
      }
      default:
        // XMLTABLE, JSON_TABLE and the like: computed from their arguments, as a function is.
        return this.#subQueries("everywhere", [item], env, block) === "everywhere" ? "everywhere" : "unknown";
    }
  }

  #table(rv: object): Distribution {
    const index = this.#occurrenceOf.get(rv);
    if (index === undefined) return "unknown";
    return this.#walk.occurrences[index]?.keyColumn === undefined ? "everywhere" : "partitioned";
  }

  /** Applies the sub-query rule for every sub-query in `parts` (not inside nested FROM sub-queries). */
  #subQueries(
    outer: Distribution,
    parts: readonly unknown[],
    env: Env,
    block: number | undefined,
  ): Distribution {
    let out = outer;
    for (const link of ownSubLinks(parts)) {
      const sub = nodeAs(link.subselect, "SelectStmt");
      if (sub === undefined) continue;
      const inner = this.select(sub, env);
      out = this.#apply(subQueryRule(out, inner), block);
    }
    return out;
  }
}

type SubLinkNode = NonNullable<ReturnType<typeof nodeAs<"SubLink">>>;

/** SubLinks in expressions, without entering their sub-queries or FROM sub-queries. */
function ownSubLinks(parts: readonly unknown[]): SubLinkNode[] {
  const out: SubLinkNode[] = [];
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v);
      return;
    }
    const record = value as Record<string, unknown>;
    for (const key in record) {
      const child = record[key];
      if (key === "SubLink") {
        const link = child as SubLinkNode;
        out.push(link);
        visit(link.testexpr);
        continue;
      }
      if (key === "SelectStmt" || key === "RangeSubselect") continue;
      visit(child);
    }
  };
  for (const part of parts) visit(part);
  return out;
}

/** Whether a query names `name` as a relation (a WITH RECURSIVE query referring to itself). */
function refersTo(query: SelectStmt, name: string): boolean {
  let found = false;
  const visit = (value: unknown): void => {
    if (found || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v);
      return;
    }
    const record = value as Record<string, unknown>;
    const rv = record["RangeVar"] as { relname?: string; schemaname?: string } | undefined;
    if (rv !== undefined && rv.schemaname === undefined && rv.relname === name) {
      found = true;
      return;
    }
    for (const key in record) visit(record[key]);
  };
  visit(query);
  return found;
}

/**
 * The distribution of a SELECT's output and every operator rule that failed on the way. Pushing
 * the statement to each region (then the planned finish) is exact only when `violations` is empty.
 */
export function distributionOf(select: SelectStmt, walk: WalkResult): DistributionVerdict {
  const walker = new DistributionWalk(walk);
  const top = walker.select(select, new Map());
  const readsPartitioned = walk.occurrences.some((o) => o.keyColumn !== undefined);
  const output = isRule(outputRule(top, readsPartitioned)) ? "unknown" : top;
  const violations = [...walker.violations];
  if (output === "unknown" && violations.length === 0)
    violations.push({ rule: "everywhere-output", block: 0 });
  return { top: output, violations };
}

/** The reason and hint of the first failed rule. */
export function describeViolation(v: DistributionViolation): { reason: string; hint: string } {
  return DISTRIBUTION_RULES[v.rule];
}
