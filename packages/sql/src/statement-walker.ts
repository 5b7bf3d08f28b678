import type {
  BlockRole,
  KeyConstraint,
  KeyLink,
  KeyValue,
  LockStrength,
  SchemaInfo,
  SessionEffect,
  TableAccess,
} from "./analysis.js";
import {
  type ColumnRef,
  type DeleteStmt,
  type FuncCall,
  type InsertStmt,
  lastName,
  type MergeStmt,
  type Node,
  nodeAs,
  type RangeVar,
  type SelectStmt,
  stringValue,
  tagOf,
  type UpdateStmt,
  type WithClause,
} from "./ast.js";
import { BUILTIN_FUNCTIONS } from "./builtin-functions.js";
import {
  BUILTIN_AGGREGATES,
  SESSION_ADVISORY_LOCKS,
  TRANSACTION_ADVISORY_LOCKS,
  VOLATILE_FUNCTIONS,
  WRITING_FUNCTIONS,
} from "./function-catalog.js";
import { type CandidateLink, type LinkOrigin, tiedLinks } from "./key-groups.js";
import { ANY, join, meet, valuesOf } from "./key-lattice.js";
import {
  canonicalKeyValue,
  canonicalKeyValues,
  type KeyType,
  keyValueOf,
  keyValuesOfArray,
} from "./key-values.js";
import { keepsKeysApart } from "./row-set-dependence.js";

/**
 * Walks one statement's parse tree into query blocks, table occurrences, predicates and flags, and
 * computes each occurrence's key constraint. Pure and synchronous; the tree is not modified.
 */

export interface Scope {
  readonly block: number;
  readonly parent: Scope | undefined;
  /** Alias or table name -> occurrence index; -1 for a name that is not a table (subquery, CTE, function). */
  readonly names: Map<string, number>;
  readonly ctes: Set<string>;
  /** Occurrences whose rows this block's FROM produces. */
  readonly occurrences: number[];
  /** FROM items that are not tables (subqueries, functions, CTE references). */
  otherFromItems: number;
  /** Output column names (ORDER BY and GROUP BY may name them). */
  readonly outputs: Set<string>;
  /**
   * Key columns merged by JOIN ... USING or NATURAL JOIN -> the occurrences whose key the merged
   * column equals on every row they contribute (both sides of an inner join; for an outer join a
   * null-extended side contributes no row, and a matched one has the same key). An unqualified
   * reference to the column names all of them.
   */
  readonly merged: Map<string, readonly number[]>;
}

export interface Occurrence {
  readonly schema: string | undefined;
  readonly name: string;
  readonly only: boolean;
  readonly alias: string | undefined;
  readonly block: number;
  readonly access: TableAccess;
  readonly keyColumn: string | undefined;
  readonly rangeVar: RangeVar;
  /** The `{ RangeVar }` wrapper when the occurrence is a FROM item (so a rewrite can replace it). */
  readonly fromNode: Node | undefined;
  /** On the nullable side of an outer join: its rows may be absent from the output. */
  nullable: boolean;
  /** Columns the statement reads from it; `all` when unknown (`*`, unqualified names in joins). */
  columns: Set<string> | "all";
  key: KeyConstraint;
}

export interface WalkBlock {
  readonly id: number;
  readonly parent: number | undefined;
  readonly role: BlockRole;
  readonly scope: Scope;
  readonly statement: Node;
  correlated: boolean;
  aggregates: boolean;
  windows: boolean;
  writes: boolean;
}

export interface Predicate {
  readonly expr: Node;
  readonly scope: Scope;
  /** Occurrences whose rows must satisfy it (those it filters). */
  readonly appliesTo: readonly number[];
  readonly via: KeyLink["via"];
  /** For a join's ON: the join's type and the occurrences of each side. */
  readonly join?: JoinSides;
}

interface JoinSides {
  readonly type: string;
  readonly left: readonly number[];
  readonly right: readonly number[];
}

interface Flow {
  readonly from: number;
  readonly to: number;
}

export interface InsertFacts {
  readonly table: number;
  readonly columns: readonly string[] | undefined;
  readonly keyPosition: number | undefined;
  readonly rowKeys: readonly (KeyValue | undefined)[] | undefined;
  readonly onConflict: "none" | "nothing" | "update";
  readonly statement: InsertStmt;
}

export interface FunctionFacts {
  volatile: Set<string>;
  /** Functions PostgreSQL does not define itself (see `StatementFlags.userFunctions`). */
  user: Set<string>;
  writing: boolean;
  advisory: boolean;
}

export interface WalkResult {
  readonly blocks: readonly WalkBlock[];
  readonly occurrences: readonly Occurrence[];
  readonly predicates: readonly Predicate[];
  readonly links: readonly KeyLink[];
  readonly insert: InsertFacts | undefined;
  readonly functions: FunctionFacts;
  readonly sessionEffects: readonly SessionEffect[];
  readonly locking: LockStrength | undefined;
  readonly selectInto: boolean;
  readonly writingCte: boolean;
  readonly assignsKey: boolean;
  readonly returning: boolean;
  readonly mergeActions: readonly ("update" | "delete" | "insert" | "nothing")[];
  /** Some key intersection involved unbound values and kept one side (a superset of the truth). */
  readonly inexactKeys: boolean;
}

const LOCK_RANK: Readonly<Record<LockStrength, number>> = {
  update: 4,
  "no-key-update": 3,
  share: 2,
  "key-share": 1,
};

function lockStrength(strength: string | undefined): LockStrength | undefined {
  switch (strength) {
    case "LCS_FORUPDATE":
      return "update";
    case "LCS_FORNOKEYUPDATE":
      return "no-key-update";
    case "LCS_FORSHARE":
      return "share";
    case "LCS_FORKEYSHARE":
      return "key-share";
    default:
      return undefined;
  }
}

export class StatementWalker {
  readonly blocks: WalkBlock[] = [];
  readonly occurrences: Occurrence[] = [];
  readonly predicates: Predicate[] = [];
  readonly sessionEffects: SessionEffect[] = [];
  readonly functions: FunctionFacts = {
    volatile: new Set(),
    user: new Set(),
    writing: false,
    advisory: false,
  };
  readonly #links: CandidateLink[] = [];
  /** Sub-queries that are top-level conjuncts of a WHERE (the rows they read are required). */
  readonly #whereConjuncts = new WeakSet<object>();
  /** Blocks of positive EXISTS / IN that a WHERE requires: their rows are present for every output row. */
  readonly #filtering = new Set<number>();
  readonly #flows: Flow[] = [];
  readonly #schema: SchemaInfo;
  #insert: InsertFacts | undefined;
  #mergeInsertKeys: { target: number; values: (Node | undefined)[] } | undefined;
  #locking: LockStrength | undefined;
  #selectInto = false;
  #writingCte = false;
  #assignsKey = false;
  #returning = false;
  #mergeActions: ("update" | "delete" | "insert" | "nothing")[] = [];
  #inexactKeys = false;
  readonly #onInexact = (): void => {
    this.#inexactKeys = true;
  };

  constructor(schema: SchemaInfo) {
    this.#schema = schema;
    this.#keyType = schema.keyType;
  }

  /** Undefined: an analyser built without the keys' type compares key literals as written. */
  readonly #keyType: KeyType | undefined;

  get #canonical(): boolean {
    return this.#keyType !== undefined;
  }

  /** A value compared with a key column, as that column's type compares it (undefined: constrains nothing). */
  #keyValue(node: Node | undefined): KeyValue | undefined {
    const value = keyValueOf(node);
    if (value === undefined || this.#keyType === undefined) return value;
    return canonicalKeyValue(value, this.#keyType);
  }

  /** Walks a data statement (SELECT/INSERT/UPDATE/DELETE/MERGE) as the top block. */
  walkTop(node: Node, role: BlockRole = "top"): WalkResult {
    this.walkStatement(node, undefined, role, undefined);
    return this.finish();
  }

  /** For statements whose tables are named outside a query (COPY t, TRUNCATE, DDL). */
  walkRelations(relations: readonly RangeVar[], access: TableAccess, query?: Node): WalkResult {
    const scope = this.#newScope(0, undefined);
    this.blocks.push(this.#newBlock(0, undefined, "top", scope, query ?? { RangeVar: relations[0] ?? {} }));
    for (const rv of relations) this.#addOccurrence(rv, scope, access, undefined);
    if (query !== undefined) this.walkStatement(query, 0, "subquery-from", scope);
    return this.finish();
  }

  finish(): WalkResult {
    this.#computeKeys();
    return {
      blocks: this.blocks,
      occurrences: this.occurrences,
      predicates: this.predicates,
      links: tiedLinks(this.occurrences.length, this.#links),
      insert: this.#insert,
      functions: this.functions,
      sessionEffects: this.sessionEffects,
      locking: this.#locking,
      selectInto: this.#selectInto,
      writingCte: this.#writingCte,
      assignsKey: this.#assignsKey,
      returning: this.#returning,
      mergeActions: this.#mergeActions,
      inexactKeys: this.#inexactKeys,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Blocks
  // -------------------------------------------------------------------------------------------

  #newScope(block: number, parent: Scope | undefined): Scope {
    return {
      block,
      parent,
      names: new Map(),
      ctes: new Set(),
      occurrences: [],
      otherFromItems: 0,
      outputs: new Set(),
      merged: new Map(),
    };
  }

  #newBlock(
    id: number,
    parent: number | undefined,
    role: BlockRole,
    scope: Scope,
    statement: Node,
  ): WalkBlock {
    return {
      id,
      parent,
      role,
      scope,
      statement,
      correlated: false,
      aggregates: false,
      windows: false,
      writes: false,
    };
  }

  /** Walks a statement as a new block; returns its id (undefined for statements that are not queries). */
  walkStatement(
    node: Node,
    parent: number | undefined,
    role: BlockRole,
    parentScope: Scope | undefined,
  ): number | undefined {
    const id = this.blocks.length;
    const scope = this.#newScope(id, parentScope);
    const block = this.#newBlock(id, parent, role, scope, node);
    const select = nodeAs(node, "SelectStmt");
    if (select !== undefined) {
      this.blocks.push(block);
      this.#walkSelect(select, block);
      return id;
    }
    const insert = nodeAs(node, "InsertStmt");
    if (insert !== undefined) {
      this.blocks.push(block);
      block.writes = true;
      this.#walkInsert(insert, block);
      return id;
    }
    const update = nodeAs(node, "UpdateStmt");
    if (update !== undefined) {
      this.blocks.push(block);
      block.writes = true;
      this.#walkUpdate(update, block);
      return id;
    }
    const del = nodeAs(node, "DeleteStmt");
    if (del !== undefined) {
      this.blocks.push(block);
      block.writes = true;
      this.#walkDelete(del, block);
      return id;
    }
    const merge = nodeAs(node, "MergeStmt");
    if (merge !== undefined) {
      this.blocks.push(block);
      block.writes = true;
      this.#walkMerge(merge, block);
      return id;
    }
    return undefined;
  }

  #walkWith(withClause: WithClause | undefined, block: WalkBlock): void {
    if (withClause === undefined) return;
    const ctes = (withClause.ctes ?? [])
      .map((c) => nodeAs(c, "CommonTableExpr"))
      .filter((c) => c !== undefined);
    // Under WITH RECURSIVE every name of the list is in scope in every body; otherwise a body
    // sees only the CTEs before it, so `WITH orders AS (SELECT * FROM orders)` reads the table.
    const recursive = withClause.recursive === true;
    if (recursive) for (const cte of ctes) if (cte.ctename !== undefined) block.scope.ctes.add(cte.ctename);
    for (const cte of ctes) {
      if (cte.ctequery !== undefined) {
        const child = this.walkStatement(cte.ctequery, block.id, "cte", block.scope);
        if (child !== undefined && this.blocks[child]?.writes === true) this.#writingCte = true;
      }
      if (!recursive && cte.ctename !== undefined) block.scope.ctes.add(cte.ctename);
    }
  }

  #walkSelect(stmt: SelectStmt, block: WalkBlock): void {
    this.#walkWith(stmt.withClause, block);
    if (stmt.op !== undefined && stmt.op !== "SETOP_NONE") {
      if (stmt.larg !== undefined)
        this.walkStatement({ SelectStmt: stmt.larg }, block.id, "set-operand", block.scope);
      if (stmt.rarg !== undefined)
        this.walkStatement({ SelectStmt: stmt.rarg }, block.id, "set-operand", block.scope);
      this.#scanList(stmt.sortClause, block, true);
      this.#scan(stmt.limitCount, block, true);
      this.#scan(stmt.limitOffset, block, true);
      this.#walkLocking(stmt);
      return;
    }
    if (stmt.intoClause !== undefined) this.#selectInto = true;
    for (const row of stmt.valuesLists ?? []) this.#scan(row, block, true);
    for (const item of stmt.fromClause ?? []) this.#walkFromItem(item, block);
    const all = block.scope.occurrences.slice();
    if (stmt.whereClause !== undefined) {
      this.predicates.push({ expr: stmt.whereClause, scope: block.scope, appliesTo: all, via: "where" });
      this.#noteWhereConjuncts(stmt.whereClause);
      this.#scan(stmt.whereClause, block, true);
    }
    this.#scanList(stmt.targetList, block, true);
    for (const t of stmt.targetList ?? []) {
      const name = nodeAs(t, "ResTarget")?.name;
      if (name !== undefined) block.scope.outputs.add(name);
    }
    this.#scanList(stmt.groupClause, block, true);
    this.#scan(stmt.havingClause, block, true);
    this.#scanList(stmt.windowClause, block, true);
    this.#scanList(stmt.sortClause, block, true);
    this.#scanList(stmt.distinctClause, block, true);
    this.#scan(stmt.limitCount, block, true);
    this.#scan(stmt.limitOffset, block, true);
    if ((stmt.groupClause?.length ?? 0) > 0 || stmt.havingClause !== undefined) block.aggregates = true;
    this.#walkLocking(stmt);
  }

  #walkLocking(stmt: SelectStmt): void {
    for (const clause of stmt.lockingClause ?? []) {
      const strength = lockStrength(nodeAs(clause, "LockingClause")?.strength);
      if (
        strength !== undefined &&
        (this.#locking === undefined || LOCK_RANK[strength] > LOCK_RANK[this.#locking])
      ) {
        this.#locking = strength;
      }
    }
  }

  #walkInsert(stmt: InsertStmt, block: WalkBlock): void {
    this.#walkWith(stmt.withClause, block);
    if (stmt.relation === undefined) return;
    const table = this.#addOccurrence(stmt.relation, block.scope, "write", undefined);
    const target = this.occurrences[table];
    const columns = stmt.cols?.map((c) => nodeAs(c, "ResTarget")?.name ?? "");
    const keyColumn = target?.keyColumn;
    const keyPosition =
      columns !== undefined && keyColumn !== undefined && columns.includes(keyColumn)
        ? columns.indexOf(keyColumn)
        : undefined;
    let rowKeys: (KeyValue | undefined)[] | undefined;
    const source = nodeAs(stmt.selectStmt, "SelectStmt");
    if (source !== undefined && isPlainValues(source)) {
      rowKeys = [];
      for (const row of source.valuesLists ?? []) {
        const items = nodeAs(row, "List")?.items ?? [];
        rowKeys.push(keyPosition === undefined ? undefined : this.#keyValue(items[keyPosition]));
        this.#scan(row, block, true);
      }
    } else if (stmt.selectStmt !== undefined) {
      const child = this.walkStatement(stmt.selectStmt, block.id, "insert-source", block.scope);
      if (
        child !== undefined &&
        source !== undefined &&
        keyPosition !== undefined &&
        (source.op ?? "SETOP_NONE") === "SETOP_NONE"
      ) {
        this.#linkInsertSource(source, keyPosition, table, child);
      }
    }
    if (stmt.onConflictClause !== undefined) {
      block.scope.names.set("excluded", -1);
      for (const t of stmt.onConflictClause.targetList ?? []) {
        const rt = nodeAs(t, "ResTarget");
        if (rt?.name !== undefined && rt.name === keyColumn) this.#assignsKey = true;
      }
      this.#scanList(stmt.onConflictClause.targetList, block, true);
      this.#scan(stmt.onConflictClause.whereClause, block, true);
    }
    this.#walkReturning(stmt.returningClause?.exprs, block);
    const onConflict =
      stmt.onConflictClause === undefined
        ? "none"
        : stmt.onConflictClause.action === "ONCONFLICT_UPDATE"
          ? "update"
          : "nothing";
    this.#insert = { table, columns, keyPosition, rowKeys, onConflict, statement: stmt };
  }

  /** INSERT ... SELECT that copies a source table's key into the target's key column. */
  #linkInsertSource(source: SelectStmt, keyPosition: number, target: number, child: number): void {
    const item = nodeAs(source.targetList?.[keyPosition], "ResTarget")?.val;
    const childBlock = this.blocks[child];
    if (item === undefined || childBlock === undefined) return;
    const ref = this.#keyRef(item, childBlock.scope);
    if (ref !== undefined) {
      this.#addLink(target, ref, "insert-select", { kind: "ties" });
      this.#flows.push({ from: ref, to: target });
      return;
    }
    const value = keyValueOf(item);
    const targetBlock = this.occurrences[target]?.block;
    if (value !== undefined && targetBlock !== undefined) {
      this.predicates.push({
        expr: syntheticEquality(this.occurrences[target]?.keyColumn ?? "", item),
        scope: this.#scopeOf(targetBlock),
        appliesTo: [target],
        via: "insert-select",
      });
    }
  }

  #walkUpdate(stmt: UpdateStmt, block: WalkBlock): void {
    this.#walkWith(stmt.withClause, block);
    if (stmt.relation === undefined) return;
    const table = this.#addOccurrence(stmt.relation, block.scope, "write", undefined);
    for (const item of stmt.fromClause ?? []) this.#walkFromItem(item, block);
    const keyColumn = this.occurrences[table]?.keyColumn;
    for (const t of stmt.targetList ?? []) {
      const rt = nodeAs(t, "ResTarget");
      if (rt?.name !== undefined && rt.name === keyColumn) this.#assignsKey = true;
    }
    this.#scanList(stmt.targetList, block, true);
    if (stmt.whereClause !== undefined) {
      if (nodeAs(stmt.whereClause, "CurrentOfExpr") === undefined) {
        this.predicates.push({
          expr: stmt.whereClause,
          scope: block.scope,
          appliesTo: block.scope.occurrences.slice(),
          via: "where",
        });
      }
      this.#noteWhereConjuncts(stmt.whereClause);
      this.#scan(stmt.whereClause, block, true);
    }
    this.#walkReturning(stmt.returningClause?.exprs, block);
  }

  #walkDelete(stmt: DeleteStmt, block: WalkBlock): void {
    this.#walkWith(stmt.withClause, block);
    if (stmt.relation === undefined) return;
    this.#addOccurrence(stmt.relation, block.scope, "write", undefined);
    for (const item of stmt.usingClause ?? []) this.#walkFromItem(item, block);
    if (stmt.whereClause !== undefined) {
      if (nodeAs(stmt.whereClause, "CurrentOfExpr") === undefined) {
        this.predicates.push({
          expr: stmt.whereClause,
          scope: block.scope,
          appliesTo: block.scope.occurrences.slice(),
          via: "where",
        });
      }
      this.#noteWhereConjuncts(stmt.whereClause);
      this.#scan(stmt.whereClause, block, true);
    }
    this.#walkReturning(stmt.returningClause?.exprs, block);
  }

  #walkMerge(stmt: MergeStmt, block: WalkBlock): void {
    this.#walkWith(stmt.withClause, block);
    if (stmt.relation === undefined) return;
    const target = this.#addOccurrence(stmt.relation, block.scope, "write", undefined);
    const before = block.scope.occurrences.length;
    if (stmt.sourceRelation !== undefined) this.#walkFromItem(stmt.sourceRelation, block, "merge-source");
    const sources = block.scope.occurrences.slice(before);
    const clauses = (stmt.mergeWhenClauses ?? [])
      .map((c) => nodeAs(c, "MergeWhenClause"))
      .filter((c) => c !== undefined);
    const notMatchedBySource = clauses.some((c) => c.matchKind === "MERGE_WHEN_NOT_MATCHED_BY_SOURCE");
    const notMatchedByTarget = clauses.some((c) => c.matchKind === "MERGE_WHEN_NOT_MATCHED_BY_TARGET");
    const keyColumn = this.occurrences[target]?.keyColumn;
    const inserted: (Node | undefined)[] = [];
    for (const clause of clauses) {
      switch (clause.commandType) {
        case "CMD_UPDATE":
          this.#mergeActions.push("update");
          for (const t of clause.targetList ?? []) {
            if (nodeAs(t, "ResTarget")?.name === keyColumn && keyColumn !== undefined)
              this.#assignsKey = true;
          }
          break;
        case "CMD_DELETE":
          this.#mergeActions.push("delete");
          break;
        case "CMD_INSERT": {
          this.#mergeActions.push("insert");
          const names = (clause.targetList ?? []).map((t) => nodeAs(t, "ResTarget")?.name);
          const position = keyColumn === undefined ? -1 : names.indexOf(keyColumn);
          inserted.push(position >= 0 ? clause.values?.[position] : undefined);
          break;
        }
        default:
          this.#mergeActions.push("nothing");
      }
      this.#scan(clause.condition, block, true);
      this.#scanList(clause.targetList, block, true);
      this.#scanList(clause.values, block, true);
    }
    if (stmt.joinCondition !== undefined) {
      const appliesTo = [...(notMatchedBySource ? [] : [target]), ...(notMatchedByTarget ? [] : sources)];
      this.predicates.push({ expr: stmt.joinCondition, scope: block.scope, appliesTo, via: "merge" });
      this.#scan(stmt.joinCondition, block, true);
    }
    if (inserted.length > 0) this.#mergeInsertKeys = { target, values: inserted };
    this.#walkReturning(stmt.returningClause?.exprs, block);
  }

  #walkReturning(exprs: Node[] | undefined, block: WalkBlock): void {
    if (exprs === undefined || exprs.length === 0) return;
    this.#returning = true;
    this.#scanList(exprs, block, true);
  }

  // -------------------------------------------------------------------------------------------
  // FROM items
  // -------------------------------------------------------------------------------------------

  #addOccurrence(rv: RangeVar, scope: Scope, access: TableAccess, fromNode: Node | undefined): number {
    const name = rv.relname ?? "";
    const schema = rv.schemaname;
    const index = this.occurrences.length;
    const keyColumn = this.#keyColumnOf(schema, name);
    this.occurrences.push({
      schema,
      name,
      only: rv.inh === false || rv.inh === undefined,
      alias: rv.alias?.aliasname,
      block: scope.block,
      access,
      keyColumn,
      rangeVar: rv,
      fromNode,
      nullable: false,
      columns: new Set(),
      key: ANY,
    });
    scope.names.set(rv.alias?.aliasname ?? name, index);
    scope.occurrences.push(index);
    return index;
  }

  #keyColumnOf(schema: string | undefined, name: string): string | undefined {
    const map = this.#schema.keyColumns;
    if (schema !== undefined) {
      const qualified = map.get(`${schema}.${name}`);
      if (qualified !== undefined) return qualified;
      // A bare configured name is the public table's, as the planner reads it.
      if (schema !== "public") return undefined;
    }
    return map.get(name);
  }

  #isCte(name: string, scope: Scope | undefined): boolean {
    for (let s = scope; s !== undefined; s = s.parent) if (s.ctes.has(name)) return true;
    return false;
  }

  /** Walks one FROM item; returns the occurrences it produced. */
  #walkFromItem(item: Node, block: WalkBlock, subqueryRole: BlockRole = "subquery-from"): number[] {
    const scope = block.scope;
    const before = scope.occurrences.length;
    const tag = tagOf(item);
    switch (tag) {
      case "RangeVar": {
        const rv = nodeAs(item, "RangeVar");
        if (rv === undefined) break;
        if (rv.schemaname === undefined && this.#isCte(rv.relname ?? "", scope)) {
          scope.names.set(rv.alias?.aliasname ?? rv.relname ?? "", -1);
          scope.otherFromItems++;
          break;
        }
        this.#addOccurrence(rv, scope, "read", item);
        break;
      }
      case "JoinExpr": {
        const je = nodeAs(item, "JoinExpr");
        if (je === undefined) break;
        const left = je.larg === undefined ? [] : this.#walkFromItem(je.larg, block, subqueryRole);
        const right = je.rarg === undefined ? [] : this.#walkFromItem(je.rarg, block, subqueryRole);
        const type = je.jointype ?? "JOIN_INNER";
        if (type === "JOIN_LEFT" || type === "JOIN_FULL") for (const o of right) this.#markNullable(o);
        if (type === "JOIN_RIGHT" || type === "JOIN_FULL") for (const o of left) this.#markNullable(o);
        const appliesTo =
          type === "JOIN_INNER"
            ? [...left, ...right]
            : type === "JOIN_LEFT"
              ? right
              : type === "JOIN_RIGHT"
                ? left
                : [];
        if (je.quals !== undefined) {
          this.predicates.push({
            expr: je.quals,
            scope,
            appliesTo,
            via: "join",
            join: { type, left, right },
          });
          this.#scan(je.quals, block, true);
        }
        const using =
          je.isNatural === true
            ? this.#naturalKeyColumns(left, right)
            : (je.usingClause ?? []).map(stringValue);
        for (const column of using) {
          if (column === undefined) continue;
          const l = this.#visibleKey(left, column, scope);
          const r = this.#visibleKey(right, column, scope);
          const lo = l?.[0];
          const ro = r?.[0];
          if (
            l !== undefined &&
            r !== undefined &&
            lo !== undefined &&
            ro !== undefined &&
            !this.#cutOff(lo, block.id) &&
            !this.#cutOff(ro, block.id)
          ) {
            const origin = this.#originOf(lo, ro, block.id, { type, left, right });
            if (origin !== undefined) this.#addLink(lo, ro, "join", origin);
            if (appliesTo.includes(ro)) this.#flows.push({ from: lo, to: ro });
            if (appliesTo.includes(lo)) this.#flows.push({ from: ro, to: lo });
            scope.merged.set(column, [...l, ...r]);
          } else scope.merged.delete(column);
          for (const o of [...left, ...right]) this.#useColumn(o, column);
        }
        if (je.alias !== undefined) scope.names.set(je.alias.aliasname ?? "", -1);
        break;
      }
      case "RangeSubselect": {
        const sub = nodeAs(item, "RangeSubselect");
        if (sub === undefined) break;
        if (sub.subquery !== undefined) {
          this.walkStatement(sub.subquery, block.id, sub.lateral === true ? "lateral" : subqueryRole, scope);
        }
        if (sub.alias !== undefined) scope.names.set(sub.alias.aliasname ?? "", -1);
        scope.otherFromItems++;
        break;
      }
      case "RangeFunction": {
        const fn = nodeAs(item, "RangeFunction");
        if (fn === undefined) break;
        this.#scanList(fn.functions, block, true);
        if (fn.alias !== undefined) scope.names.set(fn.alias.aliasname ?? "", -1);
        scope.otherFromItems++;
        break;
      }
      case "RangeTableSample": {
        const sample = nodeAs(item, "RangeTableSample");
        const rv = nodeAs(sample?.relation, "RangeVar");
        if (rv !== undefined) this.#addOccurrence(rv, scope, "read", undefined);
        this.#scanList(sample?.args, block, true);
        break;
      }
      default:
        this.#scan(item, block, true);
        scope.otherFromItems++;
    }
    return scope.occurrences.slice(before);
  }

  #markNullable(occurrence: number): void {
    const o = this.occurrences[occurrence];
    if (o !== undefined) o.nullable = true;
  }

  /**
   * The occurrences one side of a join exposes as its `column` when that is their key: the one
   * table with that key column, or a USING merge made inside the side that covers all of them.
   */
  #visibleKey(side: readonly number[], column: string, scope: Scope): readonly number[] | undefined {
    const keyed = side.filter((o) => this.occurrences[o]?.keyColumn === column);
    if (keyed.length === 1) return keyed;
    const merged = scope.merged.get(column);
    if (merged === undefined || keyed.length === 0) return undefined;
    return keyed.every((o) => merged.includes(o)) && merged.every((o) => side.includes(o))
      ? merged
      : undefined;
  }

  #naturalKeyColumns(left: readonly number[], right: readonly number[]): string[] {
    const out: string[] = [];
    for (const l of left) {
      const column = this.occurrences[l]?.keyColumn;
      if (column !== undefined && right.some((r) => this.occurrences[r]?.keyColumn === column))
        out.push(column);
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Expressions
  // -------------------------------------------------------------------------------------------

  #scanList(nodes: readonly Node[] | undefined, block: WalkBlock, positive: boolean): void {
    if (nodes === undefined) return;
    for (const n of nodes) this.#scan(n, block, positive);
  }

  /** Finds sub-queries, function calls and column references inside an expression. */
  #scan(node: unknown, block: WalkBlock, positive: boolean): void {
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      for (const n of node) this.#scan(n, block, positive);
      return;
    }
    const record = node as Record<string, unknown>;
    for (const key in record) {
      const value = record[key];
      switch (key) {
        case "SubLink":
          this.#scanSubLink(value as NonNullable<ReturnType<typeof nodeAs<"SubLink">>>, block, positive);
          continue;
        case "FuncCall":
          this.#scanFunction(value as FuncCall, block);
          break;
        case "ColumnRef":
          this.#scanColumn(value as ColumnRef, block);
          continue;
        case "BoolExpr": {
          const b = value as { boolop?: string; args?: Node[] };
          this.#scan(b.args, block, b.boolop === "NOT_EXPR" ? !positive : positive);
          continue;
        }
        case "SelectStmt":
        case "InsertStmt":
        case "UpdateStmt":
        case "DeleteStmt":
        case "MergeStmt":
          // Only reached for statements embedded outside a SubLink (none in valid trees).
          continue;
        default:
          break;
      }
      this.#scan(value, block, positive);
    }
  }

  #scanSubLink(
    link: NonNullable<ReturnType<typeof nodeAs<"SubLink">>>,
    block: WalkBlock,
    positive: boolean,
  ): void {
    this.#scan(link.testexpr, block, positive);
    if (link.subselect === undefined) return;
    const role: BlockRole =
      link.subLinkType === "EXISTS_SUBLINK" ? (positive ? "exists" : "not-exists") : "sublink";
    const child = this.walkStatement(link.subselect, block.id, role, block.scope);
    if (
      child !== undefined &&
      positive &&
      this.#whereConjuncts.has(link) &&
      (link.subLinkType === "EXISTS_SUBLINK" || link.subLinkType === "ANY_SUBLINK")
    )
      this.#filtering.add(child);
    if (child === undefined || link.subLinkType !== "ANY_SUBLINK" || link.testexpr === undefined) return;
    // `outer.key IN (SELECT inner.key ...)`: rows meet only on equal keys.
    const outer = this.#keyRef(link.testexpr, block.scope);
    const select = nodeAs(link.subselect, "SelectStmt");
    const first = nodeAs(select?.targetList?.[0], "ResTarget")?.val;
    const childBlock = this.blocks[child];
    if (
      outer === undefined ||
      first === undefined ||
      childBlock === undefined ||
      (select?.targetList?.length ?? 0) !== 1
    )
      return;
    const operator = lastName(link.operName);
    if (operator !== undefined && operator !== "=") return;
    const inner = this.#keyRef(first, childBlock.scope);
    if (inner === undefined || this.#cutOff(inner, block.id)) return;
    const required =
      this.#filtering.has(child) &&
      this.#filteringUpTo(child, this.occurrences[outer]?.block) &&
      this.occurrences[inner]?.nullable !== true;
    this.#addLink(outer, inner, "where", required ? { kind: "ties" } : { kind: "dependent", inner });
    // NOT IN over a NULL key anywhere rejects every row, so only the positive form narrows the inner side.
    if (positive) this.#flows.push({ from: outer, to: inner });
  }

  #scanFunction(fn: FuncCall, block: WalkBlock): void {
    const name = lastName(fn.funcname)?.toLowerCase() ?? "";
    if (fn.over !== undefined) block.windows = true;
    else if (
      BUILTIN_AGGREGATES.has(name) ||
      this.#schema.aggregates?.has(name) === true ||
      fn.agg_star === true ||
      fn.agg_distinct === true ||
      fn.agg_within_group === true ||
      fn.agg_filter !== undefined ||
      (fn.agg_order?.length ?? 0) > 0
    ) {
      block.aggregates = true;
    }
    const user = userFunctionOf(fn.funcname, name);
    if (user !== undefined && this.#schema.aggregates?.has(name) !== true) this.functions.user.add(user);
    if (VOLATILE_FUNCTIONS.has(name)) this.functions.volatile.add(name);
    if (WRITING_FUNCTIONS.has(name)) this.functions.writing = true;
    if (SESSION_ADVISORY_LOCKS.has(name)) {
      this.functions.advisory = true;
      this.sessionEffects.push({ kind: "advisory-lock", name, local: false });
    }
    if (TRANSACTION_ADVISORY_LOCKS.has(name)) this.functions.advisory = true;
    if (name === "set_config") {
      const setting = keyValueOf(fn.args?.[0]);
      const isLocal = fn.args?.[2];
      const local = nodeAs(isLocal, "A_Const")?.boolval?.boolval === true;
      const value = keyValueOf(fn.args?.[1]);
      this.sessionEffects.push({
        kind: "set-config",
        local,
        ...(setting?.kind === "literal" ? { name: setting.text } : {}),
        ...(value?.kind === "literal" ? { value: value.text } : {}),
      });
    }
  }

  #scanColumn(ref: ColumnRef, block: WalkBlock): void {
    const fields = ref.fields ?? [];
    const last = fields[fields.length - 1];
    const star = last !== undefined && nodeAs(last, "A_Star") !== undefined;
    if (fields.length === 1) {
      const scope = block.scope;
      if (star) {
        for (const o of scope.occurrences) this.#useAll(o);
        return;
      }
      const column = stringValue(last) ?? "";
      const named = scope.names.get(column);
      if (named !== undefined) {
        // A bare table alias is a whole-row reference.
        if (named >= 0) this.#useAll(named);
        return;
      }
      if (scope.outputs.has(column)) return;
      const only = scope.occurrences[0];
      if (scope.occurrences.length === 1 && scope.otherFromItems === 0 && only !== undefined) {
        // In a sub-query an unqualified name may belong to an outer relation (a table, VALUES or
        // a function): ship every table it may name whole, its own too, since the name may not
        // be one of its columns at all.
        if (scope.parent === undefined) this.#useColumn(only, column);
        else this.#useAll(only);
        for (let s = scope.parent; s !== undefined; s = s.parent)
          for (const o of s.occurrences) this.#useAll(o);
      } else {
        for (let s: Scope | undefined = scope; s !== undefined; s = s.parent)
          for (const o of s.occurrences) this.#useAll(o);
      }
      return;
    }
    const resolved = this.#resolveQualified(fields, block.scope);
    if (resolved === undefined) return;
    if (resolved.scope !== block.scope) block.correlated = true;
    if (star) this.#useAll(resolved.occurrence);
    else this.#useColumn(resolved.occurrence, stringValue(last) ?? "");
  }

  #useColumn(occurrence: number, column: string): void {
    const o = this.occurrences[occurrence];
    if (o !== undefined && o.columns !== "all") o.columns.add(column);
  }

  #useAll(occurrence: number): void {
    const o = this.occurrences[occurrence];
    if (o !== undefined) o.columns = "all";
  }

  /** `alias.column` or `schema.table.column` -> the occurrence it names, searching outward. */
  #resolveQualified(fields: readonly Node[], scope: Scope): { occurrence: number; scope: Scope } | undefined {
    if (fields.length === 2) {
      const qualifier = stringValue(fields[0]);
      if (qualifier === undefined) return undefined;
      for (let s: Scope | undefined = scope; s !== undefined; s = s.parent) {
        const found = s.names.get(qualifier);
        if (found === undefined) continue;
        return found >= 0 ? { occurrence: found, scope: s } : undefined;
      }
      return undefined;
    }
    if (fields.length === 3) {
      const schema = stringValue(fields[0]);
      const table = stringValue(fields[1]);
      for (let s: Scope | undefined = scope; s !== undefined; s = s.parent) {
        for (const o of s.occurrences) {
          const occ = this.occurrences[o];
          if (occ !== undefined && occ.alias === undefined && occ.name === table && occ.schema === schema) {
            return { occurrence: o, scope: s };
          }
        }
      }
    }
    return undefined;
  }

  /** The occurrence whose key column `expr` is, if it is exactly a reference to one (for a merged USING column, the first it equals). */
  #keyRef(expr: Node, scope: Scope): number | undefined {
    return this.#keyRefs(expr, scope)?.[0];
  }

  /** Every occurrence whose key `expr` equals, if it is exactly a reference to a key column. */
  #keyRefs(expr: Node, scope: Scope): readonly number[] | undefined {
    const ref = nodeAs(expr, "ColumnRef");
    if (ref === undefined) return undefined;
    const fields = ref.fields ?? [];
    const column = stringValue(fields[fields.length - 1]);
    if (column === undefined) return undefined;
    if (fields.length === 1) {
      // Unqualified: the innermost block with a table whose key has this name owns it; two such
      // tables would make the reference ambiguous, which PostgreSQL rejects, unless USING or
      // NATURAL merged them into one column.
      const candidates = scope.occurrences.filter((o) => this.occurrences[o]?.keyColumn === column);
      if (candidates.length === 1) return candidates;
      const merged = scope.merged.get(column);
      return merged !== undefined && candidates.every((o) => merged.includes(o)) ? merged : undefined;
    }
    const resolved = this.#resolveQualified(fields, scope);
    if (resolved === undefined) return undefined;
    return this.occurrences[resolved.occurrence]?.keyColumn === column ? [resolved.occurrence] : undefined;
  }

  #refersToKeyOf(expr: Node, o: number, scope: Scope): boolean {
    return this.#keyRefs(expr, scope)?.includes(o) === true;
  }

  /**
   * True when occurrence `o` is seen from block `at` only through a block whose rows for a key
   * depend on other keys' rows (`IN (SELECT k ... ORDER BY k LIMIT 1)`): a key equality there
   * neither ties the two sides to one region nor narrows the inner side to the outer's keys.
   */
  #cutOff(o: number, at: number): boolean {
    const seen = new Set<number>();
    for (let b: number | undefined = at; b !== undefined; b = this.blocks[b]?.parent) seen.add(b);
    const occurrence = this.occurrences[o];
    if (occurrence?.keyColumn === undefined) return false;
    for (
      let b: number | undefined = occurrence.block;
      b !== undefined && !seen.has(b);
      b = this.blocks[b]?.parent
    ) {
      const block = this.blocks[b];
      if (block === undefined) continue;
      const qualifier = b === occurrence.block ? (occurrence.alias ?? occurrence.name) : undefined;
      if (!keepsKeysApart(block, occurrence.keyColumn, qualifier)) return true;
    }
    return false;
  }

  #addLink(left: number, right: number, via: KeyLink["via"], origin: LinkOrigin): void {
    if (left === right) return;
    this.#links.push({ left, right, via, origin });
  }

  #noteWhereConjuncts(where: Node): void {
    for (const conjunct of conjuncts(where)) {
      const link = nodeAs(conjunct, "SubLink");
      if (link !== undefined) this.#whereConjuncts.add(link);
    }
  }

  /** Whether every block from `from` up to (not including) its ancestor `to` is a required sub-query. */
  #filteringUpTo(from: number, to: number | undefined): boolean {
    for (let b: number | undefined = from; b !== to; b = this.blocks[b]?.parent) {
      if (b === undefined || !this.#filtering.has(b)) return false;
    }
    return true;
  }

  /**
   * How an equality of `a`'s and `b`'s keys tested in block `at` (in a WHERE, or in the ON of
   * `join`) ties them (key-groups.ts); undefined when it ties nothing.
   */
  #originOf(a: number, b: number, at: number, join: JoinSides | undefined): LinkOrigin | undefined {
    const oa = this.occurrences[a];
    const ob = this.occurrences[b];
    if (oa === undefined || ob === undefined) return undefined;
    const innerA = oa.block === at;
    const innerB = ob.block === at;
    if (innerA && innerB) {
      if (join === undefined) return { kind: "ties" };
      if (join.type === "JOIN_INNER" && !oa.nullable && !ob.nullable) return { kind: "ties" };
      const aLeft = join.left.includes(a);
      const bLeft = join.left.includes(b);
      if (aLeft === bLeft) return undefined;
      const nullable = join.type === "JOIN_LEFT" ? "right" : join.type === "JOIN_RIGHT" ? "left" : undefined;
      if (nullable !== undefined)
        return { kind: "dependent", inner: (nullable === "left") === aLeft ? a : b };
      const keyed = (side: readonly number[]) =>
        side.filter((o) => this.occurrences[o]?.keyColumn !== undefined);
      return { kind: "sides", left: keyed(join.left), right: keyed(join.right) };
    }
    if (innerA || innerB) {
      const [inner, outer] = innerA ? [oa, ob] : [ob, oa];
      const present = join === undefined || (join.type === "JOIN_INNER" && !inner.nullable);
      if (present && this.#filteringUpTo(at, outer.block)) return { kind: "ties" };
      return { kind: "dependent", inner: innerA ? a : b };
    }
    // Both outside: a condition on outer rows inside a sub-query.
    if (join === undefined && this.#filteringUpTo(at, oa.block) && this.#filteringUpTo(at, ob.block))
      return { kind: "ties" };
    return undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Keys
  // -------------------------------------------------------------------------------------------

  #computeKeys(): void {
    for (const p of this.predicates) {
      for (const o of p.appliesTo) {
        const occ = this.occurrences[o];
        if (occ?.keyColumn === undefined) continue;
        occ.key = meet(occ.key, this.#constrain(p.expr, o, p.scope), this.#onInexact, this.#canonical);
      }
      for (const conjunct of conjuncts(p.expr)) {
        const pair = this.#keyEquality(conjunct, p.scope);
        if (pair === undefined) continue;
        const [a, b] = pair;
        if (this.#cutOff(a, p.scope.block) || this.#cutOff(b, p.scope.block)) continue;
        const outer =
          this.occurrences[a]?.block !== p.scope.block || this.occurrences[b]?.block !== p.scope.block;
        const origin = this.#originOf(a, b, p.scope.block, p.join);
        if (origin !== undefined) this.#addLink(a, b, outer ? "correlation" : p.via, origin);
        if (p.appliesTo.includes(b)) this.#flows.push({ from: a, to: b });
        if (p.appliesTo.includes(a)) this.#flows.push({ from: b, to: a });
      }
    }
    this.#propagate();
    const insert = this.#insert;
    if (insert?.rowKeys !== undefined) {
      const target = this.occurrences[insert.table];
      if (target?.keyColumn !== undefined) {
        const known = insert.rowKeys.every((k) => k !== undefined);
        target.key = known ? valuesOf(insert.rowKeys.filter((k) => k !== undefined)) : ANY;
      }
    }
    const merge = this.#mergeInsertKeys;
    if (merge !== undefined) {
      const target = this.occurrences[merge.target];
      if (target?.keyColumn !== undefined) {
        let insertedKeys: KeyConstraint = valuesOf([]);
        for (const value of merge.values) {
          const literal = value === undefined ? undefined : this.#keyValue(value);
          const source = value === undefined ? undefined : this.#keyRef(value, this.#scopeOf(target.block));
          const k: KeyConstraint =
            literal !== undefined
              ? valuesOf([literal])
              : source !== undefined
                ? (this.occurrences[source]?.key ?? ANY)
                : ANY;
          insertedKeys = join(insertedKeys, k);
        }
        target.key = join(target.key, insertedKeys);
      }
    }
  }

  #scopeOf(block: number): Scope {
    const b = this.blocks[block];
    if (b === undefined) throw new RangeError(`no block ${block}`);
    return b.scope;
  }

  /** Keys flow along equalities until nothing changes (bounded: each step only narrows). */
  #propagate(): void {
    const limit = this.#flows.length * 4 + 4;
    for (let round = 0; round < limit; round++) {
      let changed = false;
      for (const f of this.#flows) {
        const from = this.occurrences[f.from];
        const to = this.occurrences[f.to];
        if (from === undefined || to === undefined) continue;
        const next = meet(to.key, from.key, this.#onInexact, this.#canonical);
        if (next !== to.key && !sameConstraint(next, to.key)) {
          to.key = next;
          changed = true;
        }
      }
      if (!changed) return;
    }
  }

  #keyEquality(expr: Node, scope: Scope): [number, number] | undefined {
    const e = nodeAs(expr, "A_Expr");
    if (
      e === undefined ||
      e.kind !== "AEXPR_OP" ||
      lastName(e.name) !== "=" ||
      e.lexpr === undefined ||
      e.rexpr === undefined
    ) {
      return undefined;
    }
    const a = this.#keyRef(e.lexpr, scope);
    const b = this.#keyRef(e.rexpr, scope);
    if (a === undefined || b === undefined || a === b) return undefined;
    return [a, b];
  }

  /** The lattice value of `expr` for occurrence `o`'s key. */
  #constrain(expr: Node, o: number, scope: Scope): KeyConstraint {
    const bool = nodeAs(expr, "BoolExpr");
    if (bool !== undefined) {
      const args = bool.args ?? [];
      switch (bool.boolop) {
        case "AND_EXPR":
          return args.reduce<KeyConstraint>(
            (acc, a) => meet(acc, this.#constrain(a, o, scope), this.#onInexact, this.#canonical),
            ANY,
          );
        case "OR_EXPR": {
          if (args.length === 0) return ANY;
          let acc: KeyConstraint | undefined;
          for (const a of args) {
            const c = this.#constrain(a, o, scope);
            acc = acc === undefined ? c : join(acc, c);
            if (acc.kind === "any") return ANY;
          }
          return acc ?? ANY;
        }
        default:
          return ANY;
      }
    }
    const e = nodeAs(expr, "A_Expr");
    if (e === undefined || lastName(e.name) !== "=" || e.lexpr === undefined || e.rexpr === undefined)
      return ANY;
    switch (e.kind) {
      case "AEXPR_OP": {
        if (this.#refersToKeyOf(e.lexpr, o, scope)) {
          const v = this.#keyValue(e.rexpr);
          if (v !== undefined) return valuesOf([v]);
        }
        if (this.#refersToKeyOf(e.rexpr, o, scope)) {
          const v = this.#keyValue(e.lexpr);
          if (v !== undefined) return valuesOf([v]);
        }
        return ANY;
      }
      case "AEXPR_IN": {
        if (!this.#refersToKeyOf(e.lexpr, o, scope)) return ANY;
        const items = nodeAs(e.rexpr, "List")?.items ?? [];
        const values: KeyValue[] = [];
        for (const item of items) {
          const v = this.#keyValue(item);
          if (v === undefined) return ANY;
          values.push(v);
        }
        return valuesOf(values);
      }
      case "AEXPR_OP_ANY": {
        if (!this.#refersToKeyOf(e.lexpr, o, scope)) return ANY;
        const listed = keyValuesOfArray(e.rexpr);
        const values =
          listed === undefined || this.#keyType === undefined
            ? listed
            : canonicalKeyValues(listed, this.#keyType);
        return values === undefined ? ANY : valuesOf(values);
      }
      default:
        return ANY;
    }
  }
}

function sameConstraint(a: KeyConstraint, b: KeyConstraint): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "any" || b.kind === "any") return true;
  return a.values.length === b.values.length && a.values.every((v, i) => v === b.values[i]);
}

/** Top-level AND conjuncts of an expression. */
export function conjuncts(expr: Node): Node[] {
  const bool = nodeAs(expr, "BoolExpr");
  if (bool?.boolop === "AND_EXPR") return (bool.args ?? []).flatMap(conjuncts);
  return [expr];
}

function isPlainValues(select: SelectStmt): boolean {
  return (
    (select.valuesLists?.length ?? 0) > 0 &&
    select.withClause === undefined &&
    (select.sortClause?.length ?? 0) === 0 &&
    select.limitCount === undefined &&
    select.limitOffset === undefined
  );
}

function syntheticEquality(column: string, value: Node): Node {
  return {
    A_Expr: {
      kind: "AEXPR_OP",
      name: [{ String: { sval: "=" } }],
      lexpr: { ColumnRef: { fields: [{ String: { sval: column } }] } },
      rexpr: value,
    },
  };
}

/**
 * A called function's name when PostgreSQL does not define it: qualified by a schema other than
 * pg_catalog, or unqualified and not one of the server's own names (an unqualified name that is
 * also a built-in one is read as the built-in: pg_catalog is searched first).
 */
function userFunctionOf(funcname: readonly Node[] | undefined, name: string): string | undefined {
  if ((funcname?.length ?? 0) > 1) {
    const schema = stringValue(funcname?.[funcname.length - 2]);
    if (schema === "pg_catalog" || schema === "information_schema") return undefined;
    return `${schema}.${name}`;
  }
  return BUILTIN_FUNCTIONS.has(name) ? undefined : name;
}
