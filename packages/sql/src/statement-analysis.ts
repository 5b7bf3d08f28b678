import type {
  Analysis,
  ConsoleCommand,
  CrossJoin,
  GatherPlan,
  Hints,
  InsertRows,
  KeyLink,
  Maintenance,
  MergePlan,
  PrimaryReason,
  QueryBlock,
  RefusedPlan,
  SchemaInfo,
  SessionEffect,
  StatementFlags,
  StatementKind,
  TableRef,
  TransactionControl,
} from "./analysis.js";
import type { AnalysisCore, InsertCore } from "./classify.js";
import { RewriteMismatch } from "./deparse.js";
import { type IdColumn, idColumns } from "./id-columns.js";
import { splitInsert } from "./insert-split.js";
import { planGather, planMerge } from "./merge-plan.js";
import { type TableChange, tableChanges } from "./table-changes.js";

/**
 * An `Analysis`: the shared, cached core of a statement's shape plus this statement's own text,
 * hints and (built on first use) merge plan and INSERT splitter.
 */
export class StatementAnalysis implements Analysis {
  readonly text: string;
  readonly kind: StatementKind;
  readonly command: string;
  readonly readOnly: boolean;
  readonly needsPrimary: PrimaryReason | undefined;
  readonly transaction?: TransactionControl;
  readonly sessionEffects: readonly SessionEffect[];
  readonly blocks: readonly QueryBlock[];
  readonly tables: readonly TableRef[];
  readonly links: readonly KeyLink[];
  readonly crossJoins: readonly CrossJoin[];
  readonly flags: StatementFlags;
  readonly insert?: InsertRows;
  readonly hints: Hints;
  readonly paramCount: number;
  readonly console?: ConsoleCommand;
  readonly explain?: { readonly analyze: boolean };
  readonly mergeActions?: readonly ("update" | "delete" | "insert" | "nothing")[];
  readonly maintenance?: Maintenance;
  readonly unparsed?: boolean;
  readonly #schema: SchemaInfo;
  #merge: MergePlan | undefined;
  #idColumns: readonly IdColumn[] | undefined;
  #tableChanges: readonly TableChange[] | undefined;
  #gather: GatherPlan | RefusedPlan | undefined;

  constructor(
    core: AnalysisCore,
    text: string,
    hints: Hints,
    schema: SchemaInfo,
    extra?: { console?: ConsoleCommand; unparsed?: boolean },
    parts?: { readonly tables: readonly TableRef[]; readonly insertRows: InsertCore | undefined },
  ) {
    this.text = text;
    this.kind = core.kind;
    this.command = core.command;
    this.hints = hints;
    if (hints.primary && core.readOnly) {
      this.readOnly = false;
      this.needsPrimary = "hint";
    } else {
      this.readOnly = core.readOnly;
      this.needsPrimary = core.needsPrimary;
    }
    if (core.transaction !== undefined) this.transaction = core.transaction;
    this.sessionEffects = core.sessionEffects;
    this.blocks = core.blocks;
    this.tables = parts === undefined ? core.tables : parts.tables;
    this.links = core.links;
    this.crossJoins = core.crossJoins;
    this.flags = core.flags;
    this.paramCount = core.paramCount;
    if (core.explain !== undefined) this.explain = core.explain;
    if (core.mergeActions !== undefined) this.mergeActions = core.mergeActions;
    if (core.maintenance !== undefined) this.maintenance = core.maintenance;
    if (extra?.console !== undefined) this.console = extra.console;
    if (extra?.unparsed === true) this.unparsed = true;
    this.#schema = schema;
    const rows = parts === undefined ? core.insertRows : parts.insertRows;
    if (rows !== undefined) {
      const split = (which: readonly number[]): string => splitInsert(this.text, which);
      this.insert = {
        table: rows.table,
        rowKeys: rows.rowKeys,
        onConflict: rows.onConflict,
        split,
        ...(rows.columns === undefined ? {} : { columns: rows.columns }),
        ...(rows.keyPosition === undefined ? {} : { keyPosition: rows.keyPosition }),
      };
    }
  }

  get merge(): MergePlan {
    this.#merge ??= orRefused(() => planMerge(this, this.#schema));
    return this.#merge;
  }

  get tableChanges(): readonly TableChange[] {
    this.#tableChanges ??= this.kind === "ddl" ? tableChanges(this.text) : [];
    return this.#tableChanges;
  }

  get idColumns(): readonly IdColumn[] {
    this.#idColumns ??= this.kind === "ddl" ? idColumns(this.text) : [];
    return this.#idColumns;
  }

  get gather(): GatherPlan | RefusedPlan {
    this.#gather ??= orRefused(() => planGather(this, this.#schema));
    return this.#gather;
  }
}

/** A plan whose rewrite would not read back as written is refused: exact or refuse. */
function orRefused<T extends MergePlan | GatherPlan | RefusedPlan>(planned: () => T): T | RefusedPlan {
  try {
    return planned();
  } catch (error) {
    if (!(error instanceof RewriteMismatch)) throw error;
    return {
      tier: "refused",
      sqlstate: "0A000",
      reason:
        "the statement cannot be rewritten exactly for a read across regions (its rewrite would read back as another statement)",
      hint: "constrain it to one region with a key condition, or write the expression another way (for example without IS [NOT] NULL or IS TRUE around an operator expression)",
      movesRowData: false,
    };
  }
}
