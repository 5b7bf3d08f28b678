import { Prng } from "../prng.js";
import { lit } from "../schema.js";
import { type FromNode, type Output, type QueryNode, render, type SelectNode, type SqlType } from "./ast.js";
import {
  AUDIT_ACTIONS,
  BADGE_TAGS,
  COUNTRY_CODES,
  CURRENCY_CODES,
  GRAMMAR_TENANTS,
  GRAMMAR_UNKNOWN,
  ORDER_STATUSES,
  USER_NAMES,
} from "./world.js";

/** A column visible in a scope: `ref` is how it is written (`u.name`), `name` its column name. */
interface Col {
  readonly ref: string;
  readonly name: string;
  readonly type: SqlType;
  /** The partition key of a geo-partitioned table. */
  readonly key: boolean;
}

type Placement = "partitioned" | "replicated" | "pinned" | "constant" | "derived";

interface TableDef {
  readonly name: string;
  readonly alias: string;
  readonly placement: Placement;
  readonly cols: readonly (readonly [string, SqlType])[];
}

const TABLES: readonly TableDef[] = [
  {
    name: "users",
    alias: "u",
    placement: "partitioned",
    cols: [
      ["tenant_id", "text"],
      ["id", "int"],
      ["name", "text"],
      ["country", "text"],
      ["age", "int"],
      ["last_seen", "ts"],
      ["active", "bool"],
    ],
  },
  {
    name: "orders",
    alias: "o",
    placement: "partitioned",
    cols: [
      ["tenant_id", "text"],
      ["id", "int"],
      ["user_id", "int"],
      ["buyer", "int"],
      ["currency", "text"],
      ["total", "num"],
      ["status", "text"],
      ["created_at", "ts"],
    ],
  },
  {
    name: "badges",
    alias: "b",
    placement: "partitioned",
    cols: [
      ["tenant_id", "text"],
      ["id", "int"],
      ["bits", "bits"],
      ["grade", "char"],
      ["tags", "tarr"],
      ["weight", "real"],
      ["price", "comp"],
    ],
  },
  {
    name: "currencies",
    alias: "c",
    placement: "replicated",
    cols: [
      ["code", "text"],
      ["name", "text"],
      ["digits", "int"],
    ],
  },
  {
    name: "fx_rates",
    alias: "f",
    placement: "replicated",
    cols: [
      ["base", "text"],
      ["quote", "text"],
      ["rate", "num"],
    ],
  },
  {
    name: "eu_audit",
    alias: "a",
    placement: "pinned",
    cols: [
      ["id", "int"],
      ["tenant_id", "text"],
      ["action", "text"],
      ["at", "ts"],
    ],
  },
];

/** The integer-keyed world (a second proxy with `key_type = "integer"`): accounts and moves by acct. */
const INT_TABLES: readonly TableDef[] = [
  {
    name: "accounts",
    alias: "x",
    placement: "partitioned",
    cols: [
      ["acct", "int"],
      ["id", "int"],
      ["owner", "text"],
      ["balance", "num"],
    ],
  },
  {
    name: "moves",
    alias: "m",
    placement: "partitioned",
    cols: [
      ["acct", "int"],
      ["id", "int"],
      ["amount", "num"],
      ["kind", "text"],
    ],
  },
];

/** Integer keys held by some region (1..9) and one no region holds. */
export const INT_KEYS = [1, 2, 3, 4, 5, 6, 7, 8, 9] as const;
const INT_UNKNOWN = 42;

const KEY_NAMES = new Set(["tenant_id", "acct", "k"]);

const TABLE_WEIGHTS: Record<string, number> = {
  accounts: 3,
  moves: 2,
  users: 5,
  orders: 5,
  badges: 2,
  currencies: 3,
  fx_rates: 1,
  eu_audit: 1.5,
};

const ORDERABLE: readonly SqlType[] = ["int", "num", "text", "ts"];
const SET_TYPES: readonly SqlType[] = ["int", "num", "text", "bool", "ts", "text", "int"];

/** What a statement needs beyond its text: parameters (bound as text) and its CTE names. */
class Context {
  params: string[] | undefined;
  private aliasCounter = 0;
  /** CTEs visible to FROM items: name and output types. */
  readonly ctes: { name: string; cols: { name: string; type: SqlType }[] }[] = [];
  constructor(readonly rng: Prng) {}

  alias(prefix: string): string {
    this.aliasCounter++;
    return `${prefix}${this.aliasCounter}`;
  }

  chance(p: number): boolean {
    return this.rng.chance(p);
  }
  int(low: number, high: number): number {
    return this.rng.int(low, high);
  }
  pick<T>(items: readonly T[]): T {
    return this.rng.pick(items);
  }
  weighted<T>(items: readonly (readonly [number, T])[]): T {
    const total = items.reduce((sum, [w]) => sum + w, 0);
    let r = (this.rng.nextUint32() / 0x1_0000_0000) * total;
    for (const [w, item] of items) {
      r -= w;
      if (r < 0) return item;
    }
    return items[items.length - 1]![1];
  }

  /** A tenant key value (now and then one no region holds). */
  tenantValue(): string {
    return this.chance(0.08) ? this.pick(GRAMMAR_UNKNOWN) : this.pick(GRAMMAR_TENANTS).key;
  }

  /** A text value as a literal, or as a parameter when this statement binds parameters. */
  textValue(value: string, allowParam = true): string {
    if (allowParam && this.params !== undefined && this.chance(0.6)) {
      this.params.push(value);
      const index = this.params.length;
      return this.chance(0.5) ? `$${index}` : `$${index}::text`;
    }
    return this.chance(0.15) ? `${lit(value)}::text` : lit(value);
  }
}

/** Literal values that fit a column, by its name. */
function vocabulary(name: string): readonly string[] {
  switch (name) {
    case "tenant_id":
    case "k":
      return [...GRAMMAR_TENANTS.map((t) => t.key), ...GRAMMAR_UNKNOWN];
    case "name":
    case "owner":
      return USER_NAMES;
    case "kind":
      return ["in", "out", "Fee"];
    case "country":
      return COUNTRY_CODES;
    case "status":
      return ORDER_STATUSES;
    case "currency":
    case "code":
    case "base":
    case "quote":
      return CURRENCY_CODES;
    case "action":
      return AUDIT_ACTIONS;
    default:
      return [...USER_NAMES.slice(0, 4), "EUR", "open", "alice", "m"];
  }
}

interface Env {
  readonly scope: readonly Col[];
  /** Columns of enclosing queries, for correlation. */
  readonly outer: readonly Col[];
  readonly depth: number;
}

class Generator {
  constructor(
    readonly ctx: Context,
    readonly tables: readonly TableDef[] = TABLES,
  ) {}

  // ---------------------------------------------------------------- literals and key predicates

  literal(type: SqlType, name = ""): string {
    const ctx = this.ctx;
    switch (type) {
      case "int":
        return String(ctx.int(0, 6));
      case "num":
        return `${ctx.int(0, 400)}.${ctx.pick(["0", "5", "25", "99"])}`;
      case "text":
        return ctx.textValue(ctx.pick(vocabulary(name)));
      case "bool":
        return ctx.pick(["true", "false"]);
      case "ts":
        return `'2025-${String(ctx.int(1, 12)).padStart(2, "0")}-15 00:00:00+00'::timestamptz`;
      case "real":
        return `${ctx.int(0, 40)}.5::real`;
      case "bits":
        return `B'${Array.from({ length: 4 }, () => (ctx.chance(0.5) ? "1" : "0")).join("")}'`;
      case "char":
        return `${lit(ctx.pick(["a", "b", "z", "Z"]))}::"char"`;
      case "tarr":
        return `ARRAY[${lit(ctx.pick(BADGE_TAGS))}]::text[]`;
      case "comp":
        return `ROW(${ctx.int(1, 3)}, ${lit(ctx.pick(["ann", "EUR"]))})`;
    }
  }

  /** A condition on a partition key, in one of the spellings a client may write. */
  keyPredicate(col: Col): string {
    if (col.type === "int") return this.intKeyPredicate(col);
    const ctx = this.ctx;
    const ref = col.ref;
    const one = ctx.tenantValue();
    const two = ctx.tenantValue();
    const v = (value: string) => ctx.textValue(value);
    return ctx.weighted<() => string>([
      [6, () => `${ref} = ${v(one)}`],
      [2, () => `${v(one)} = ${ref}`],
      [2, () => `${ref} = ${lit(one)}::text`],
      [3, () => `${ref} IN (${v(one)}, ${v(two)})`],
      [2, () => `${ref} = ANY(ARRAY[${v(one)}, ${v(two)}])`],
      [1, () => `${ref} = ANY(ARRAY[${lit(one)}]::text[])`],
      [2, () => `${ref} = ${lit(one)} AND ${ref} = ${lit(one)}::text`],
      [1, () => `${ref} = ${lit(one)} AND ${ref} IN (${lit(one)}, ${lit(two)})`],
      [1, () => `${ref} = ${lit(one)} AND ${ref} = ${lit(two)}`],
      [2, () => `(${ref} = ${v(one)} OR ${ref} = ${v(two)})`],
      [1, () => `${ref}::text = ${lit(one)}`],
      [1, () => `${ref} = ${lit(one)} COLLATE "C"`],
      [1, () => `lower(${ref}) = ${lit(one.toLowerCase())}`],
      [1, () => `${ref} = ${lit(one)} COLLATE ci`],
      [1, () => `${ref} IN (SELECT v.k FROM (VALUES (${lit(one)}), (${lit(two)})) AS v(k))`],
      [1, () => `${ref} BETWEEN ${lit("a")} AND ${lit("f")}`],
      [1, () => `${ref} LIKE ${lit(`${one.slice(0, 1)}%`)}`],
      [1, () => `${ref} <> ${lit(one)}`],
      [1, () => `NOT (${ref} = ${lit(one)})`],
    ])();
  }

  /** A condition on an integer key, in the spellings PostgreSQL accepts for it: 5, 5.0, '05', ... */
  intKeyPredicate(col: Col): string {
    const ctx = this.ctx;
    const ref = col.ref;
    const one = ctx.chance(0.08) ? INT_UNKNOWN : ctx.pick(INT_KEYS);
    const two = ctx.pick(INT_KEYS);
    const spell = (n: number) =>
      ctx.weighted<string>([
        [4, String(n)],
        [2, `${n}.0`],
        [2, `'${String(n).padStart(2, "0")}'`],
        [1, `'${n}'`],
        [1, `${n}::bigint`],
        [1, `'${n}'::int`],
        [1, `${n}::numeric`],
        [1, `'+${n}'`],
      ]);
    const param = (n: number) => {
      if (this.ctx.params === undefined || !ctx.chance(0.6)) return spell(n);
      this.ctx.params.push(ctx.pick([String(n), String(n).padStart(2, "0"), ` ${n}`]));
      return ctx.chance(0.5) ? `$${this.ctx.params.length}` : `$${this.ctx.params.length}::int`;
    };
    return ctx.weighted<() => string>([
      [5, () => `${ref} = ${param(one)}`],
      [2, () => `${param(one)} = ${ref}`],
      [3, () => `${ref} = ${spell(one)} AND ${ref} = ${spell(one)}`],
      [1, () => `${ref} = ${spell(one)} AND ${ref} = ${spell(two)}`],
      [3, () => `${ref} IN (${spell(one)}, ${spell(two)})`],
      [2, () => `${ref} = ANY(ARRAY[${one}, ${two}])`],
      [1, () => `${ref} = ANY('{${one},${two}}'::int[])`],
      [1, () => `${ref} = ${one}.5`],
      [1, () => `${ref} = ${spell(one)} AND ${ref} IN (${spell(one)}, ${spell(two)})`],
      [1, () => `(${ref} = ${spell(one)} OR ${ref} = ${spell(two)})`],
      [1, () => `${ref} BETWEEN ${Math.min(one, two)} AND ${Math.max(one, two)}`],
      [1, () => `${ref}::text = '${one}'`],
      [1, () => `${ref} + 0 = ${one}`],
    ])();
  }

  // ---------------------------------------------------------------- expressions

  colsOf(env: Env, type: SqlType, withOuter = false): Col[] {
    const cols = env.scope.filter((c) => c.type === type);
    return withOuter ? [...cols, ...env.outer.filter((c) => c.type === type)] : cols;
  }

  /** A value expression of `type` over the scope (no aggregates). */
  expr(type: SqlType, env: Env, depth = 0): string {
    const ctx = this.ctx;
    const cols = this.colsOf(env, type, ctx.chance(0.1));
    if (cols.length > 0 && (depth > 1 || ctx.chance(0.6))) return ctx.pick(cols).ref;
    if (depth > 2) return cols.length > 0 ? ctx.pick(cols).ref : this.literal(type);
    const d = depth + 1;
    switch (type) {
      case "int":
        return ctx.weighted<() => string>([
          [2, () => this.literal("int")],
          [2, () => `(${this.expr("int", env, d)} + ${ctx.int(1, 3)})`],
          [1, () => `length(${this.expr("text", env, d)})`],
          [1, () => `coalesce(${this.expr("int", env, d)}, 0)`],
          [
            1,
            () =>
              `CASE WHEN ${this.predicate(env, d)} THEN ${this.expr("int", env, d)} ELSE ${ctx.int(0, 9)} END`,
          ],
          [env.depth < 2 ? 1 : 0, () => `(${render(this.scalarSubquery("int", env))})`],
          [0.5, () => `(${this.expr("int", env, d)} % 3)`],
        ])();
      case "num":
        return ctx.weighted<() => string>([
          [2, () => this.literal("num")],
          [1, () => `round(${this.expr("num", env, d)}, 1)`],
          [1, () => `(${this.expr("num", env, d)} * 2)`],
          [1, () => `(${this.expr("int", env, d)})::numeric`],
          [env.depth < 2 ? 0.5 : 0, () => `(${render(this.scalarSubquery("num", env))})`],
        ])();
      case "text":
        return ctx.weighted<() => string>([
          [2, () => this.literal("text")],
          [1, () => `upper(${this.expr("text", env, d)})`],
          [1, () => `coalesce(${this.expr("text", env, d)}, 'none')`],
          [1, () => `(${this.expr("text", env, d)} || '-')`],
          [1, () => `substr(${this.expr("text", env, d)}, 1, 2)`],
          [env.depth < 2 ? 1 : 0, () => `(${render(this.scalarSubquery("text", env))})`],
        ])();
      case "bool":
        return this.predicate(env, d);
      case "real":
        return ctx.weighted<() => string>([
          [1, () => this.literal("real")],
          [1, () => `(${this.expr("int", env, d)})::real / 4`],
        ])();
      case "ts":
        return this.literal("ts");
      case "bits":
        return ctx.weighted<() => string>([
          [1, () => this.literal("bits")],
          [1, () => `(${this.expr("bits", env, d)} & B'0110')`],
          [1, () => `~${this.expr("bits", env, d)}`],
        ])();
      case "char":
        return this.literal("char");
      case "tarr":
        return ctx.weighted<() => string>([
          [1, () => this.literal("tarr")],
          [1, () => `ARRAY[${this.expr("text", env, d)}]`],
          [1, () => `array_append(${this.expr("tarr", env, d)}, 'x')`],
        ])();
      case "comp":
        return `ROW(${this.expr("int", env, d)}, ${this.expr("text", env, d)})`;
    }
  }

  /** A boolean condition over the scope: comparisons, key conditions, NULL tests, sub-queries. */
  predicate(env: Env, depth = 0): string {
    const ctx = this.ctx;
    const keys = env.scope.filter((c) => c.key);
    const comparable = env.scope.filter((c) => ORDERABLE.includes(c.type));
    const sub = env.depth < 2 && depth < 2 ? 1 : 0;
    const d = depth + 1;
    const choice = ctx.weighted<() => string>([
      [keys.length > 0 ? 5 : 0, () => this.keyPredicate(ctx.pick(keys))],
      [
        comparable.length > 0 ? 5 : 0,
        () => {
          const col = ctx.pick(comparable);
          const op = ctx.pick(["=", "<>", "<", "<=", ">", ">="]);
          const others = this.colsOf(env, col.type, true).filter((c) => c.ref !== col.ref);
          const rhs =
            others.length > 0 && ctx.chance(0.3) ? ctx.pick(others).ref : this.literal(col.type, col.name);
          return `${col.ref} ${op} ${rhs}`;
        },
      ],
      [env.scope.length > 0 ? 2 : 0, () => `${ctx.pick(env.scope).ref} IS ${ctx.pick(["NULL", "NOT NULL"])}`],
      [
        comparable.length > 0 ? 2 : 0,
        () => {
          const col = ctx.pick(comparable);
          const values = [this.literal(col.type, col.name), this.literal(col.type, col.name)];
          if (ctx.chance(0.2)) values.push(`NULL`);
          return `${col.ref} ${ctx.pick(["IN", "NOT IN"])} (${values.join(", ")})`;
        },
      ],
      [
        this.colsOf(env, "text").length > 0 ? 1 : 0,
        () => {
          const col = ctx.pick(this.colsOf(env, "text"));
          return ctx.weighted<() => string>([
            [1, () => `${col.ref} LIKE ${lit(`${ctx.pick(["a", "b", "E", "o"])}%`)}`],
            [1, () => `${col.ref} = ${lit(ctx.pick(vocabulary(col.name)).toUpperCase())} COLLATE ci`],
            [1, () => `${col.ref} COLLATE "C" < ${lit(ctx.pick(["a", "M", "b"]))}`],
            [1, () => `${col.ref} COLLATE "und-x-icu" < ${lit(ctx.pick(["a", "M", "b"]))}`],
          ])();
        },
      ],
      [this.colsOf(env, "bool").length > 0 ? 1 : 0, () => ctx.pick(this.colsOf(env, "bool")).ref],
      [
        this.colsOf(env, "bits").length > 0 ? 1 : 0,
        () => `${ctx.pick(this.colsOf(env, "bits")).ref} > ${this.literal("bits")}`,
      ],
      [
        this.colsOf(env, "char").length > 0 ? 1 : 0,
        () =>
          `${ctx.pick(this.colsOf(env, "char")).ref} ${ctx.pick(["=", "<", ">"])} ${this.literal("char")}`,
      ],
      [
        this.colsOf(env, "tarr").length > 0 ? 1 : 0,
        () => `${lit(ctx.pick(BADGE_TAGS))} = ANY(${ctx.pick(this.colsOf(env, "tarr")).ref})`,
      ],
      [
        this.colsOf(env, "comp").length > 0 ? 1 : 0,
        () => `(${ctx.pick(this.colsOf(env, "comp")).ref}).amount > ${ctx.int(0, 99)}`,
      ],
      [sub * 3, () => `${ctx.pick(["EXISTS", "NOT EXISTS"])} (${render(this.subquery(env, undefined))})`],
      [
        sub * comparable.length > 0 ? 3 : 0,
        () => {
          const col = ctx.pick(comparable);
          return `${col.ref} ${ctx.pick(["IN", "NOT IN", "IN"])} (${render(this.subquery(env, col.type, col))})`;
        },
      ],
      [
        sub * comparable.length > 0 ? 1 : 0,
        () => {
          const col = ctx.pick(comparable);
          return `${col.ref} ${ctx.pick(["=", "<", ">="])} (${render(this.scalarSubquery(col.type, env))})`;
        },
      ],
      [
        depth < 2 ? 2 : 0,
        () => `(${this.predicate(env, d)} ${ctx.pick(["AND", "OR"])} ${this.predicate(env, d)})`,
      ],
      [depth < 2 ? 1 : 0, () => `NOT (${this.predicate(env, d)})`],
      [env.scope.length === 0 ? 1 : 0.2, () => ctx.pick(["true", "false", "NULL::boolean"])],
    ]);
    return choice();
  }

  // ---------------------------------------------------------------- sub-queries

  innerEnv(env: Env): Env {
    return { scope: [], outer: [...env.scope, ...env.outer], depth: env.depth + 1 };
  }

  /** A correlation between a sub-query's scope and the enclosing one: on the key or not. */
  correlation(inner: readonly Col[], outer: readonly Col[]): string | undefined {
    const ctx = this.ctx;
    const innerKeys = inner.filter((c) => KEY_NAMES.has(c.name) || c.key);
    const outerKeys = outer.filter((c) => KEY_NAMES.has(c.name));
    if (innerKeys.length > 0 && outerKeys.length > 0 && ctx.chance(0.6))
      return `${ctx.pick(innerKeys).ref} = ${ctx.pick(outerKeys).ref}`;
    const pairs: [Col, Col][] = [];
    for (const i of inner)
      for (const o of outer) if (i.type === o.type && ORDERABLE.includes(i.type)) pairs.push([i, o]);
    if (pairs.length === 0) return undefined;
    const [i, o] = ctx.pick(pairs);
    return `${i.ref} ${ctx.chance(0.85) ? "=" : "<>"} ${o.ref}`;
  }

  /** A sub-query for EXISTS (`type` undefined) or IN (one output column of `type`). */
  subquery(env: Env, type: SqlType | undefined, against?: Col): SelectNode {
    const ctx = this.ctx;
    const inner = this.innerEnv(env);
    const from = this.fromClause(inner, 0);
    const scope = from.cols;
    const innerEnv: Env = { ...inner, scope };
    const where: string[] = [];
    if (ctx.chance(0.65)) {
      const corr = this.correlation(scope, env.scope.length > 0 ? env.scope : env.outer);
      if (corr !== undefined) where.push(corr);
    }
    if (ctx.chance(0.6)) where.push(this.predicate(innerEnv, 1));
    let outputs: Output[];
    if (type === undefined) outputs = [{ expr: ctx.pick(["1", "NULL", "true"]), type: "int" }];
    else {
      const fitting = scope.filter(
        (c) => c.type === type && (against === undefined || c.name === against.name),
      );
      const any = scope.filter((c) => c.type === type);
      const col =
        fitting.length > 0 && ctx.chance(0.7)
          ? ctx.pick(fitting)
          : any.length > 0
            ? ctx.pick(any)
            : undefined;
      outputs = [{ expr: col?.ref ?? this.literal(type), type }];
    }
    const node: SelectNode = {
      kind: "select",
      outputs,
      from: from.node,
      where,
      aggregated: false,
      windowed: false,
    };
    if (ctx.chance(0.15) && outputs.length === 1) {
      return {
        ...node,
        order: { orderBy: ["1"], total: true, limit: String(ctx.int(1, 3)) },
      };
    }
    return node;
  }

  /**
   * A sub-query returning at most one row of one column: an aggregate without GROUP BY. Only
   * where the caller says it is evaluated exactly once (the select list of a statement with no
   * FROM) may it be a plain select that can return several rows.
   */
  scalarSubquery(type: SqlType, env: Env, evaluatedOnce = false): SelectNode {
    const ctx = this.ctx;
    const inner = this.innerEnv(env);
    const from = this.fromClause(inner, 0);
    const innerEnv: Env = { ...inner, scope: from.cols };
    const where: string[] = [];
    if (ctx.chance(0.7)) {
      const corr = this.correlation(from.cols, env.scope.length > 0 ? env.scope : env.outer);
      if (corr !== undefined) where.push(corr);
    }
    if (ctx.chance(0.4)) where.push(this.predicate(innerEnv, 1));
    // Only where it is evaluated exactly once (a statement with no FROM): inside a predicate or a
    // per-row expression, whether it runs at all, and so whether 21000 is raised, is the plan's choice.
    if (evaluatedOnce && ctx.chance(0.2)) {
      // Not guaranteed to be one row: PostgreSQL raises 21000 when it is not; the proxy must agree.
      const cols = this.colsOf(innerEnv, type);
      return {
        kind: "select",
        outputs: [{ expr: cols.length > 0 ? ctx.pick(cols).ref : this.literal(type), type }],
        from: from.node,
        where,
        aggregated: false,
        windowed: false,
      };
    }
    return {
      kind: "select",
      outputs: [{ expr: this.aggregate(type, innerEnv), type }],
      from: from.node,
      where,
      aggregated: true,
      windowed: false,
    };
  }

  // ---------------------------------------------------------------- aggregates and windows

  /** An aggregate call of (roughly) `type` over the scope. */
  aggregate(type: SqlType, env: Env): string {
    const ctx = this.ctx;
    const pickCol = (t: SqlType) => {
      const cols = this.colsOf(env, t);
      return cols.length > 0 ? ctx.pick(cols).ref : undefined;
    };
    const int = pickCol("int");
    const num = pickCol("num");
    const text = pickCol("text");
    const real = pickCol("real");
    switch (type) {
      case "int":
        return ctx.weighted<() => string>([
          [3, () => "count(*)"],
          [1, () => `count(${this.expr(ctx.pick(["int", "text"]), env, 1)})`],
          [1, () => `count(DISTINCT ${text ?? "1"})`],
          [1, () => `count(DISTINCT ${text ?? "'x'"} COLLATE ci)`],
          [int !== undefined ? 2 : 0, () => `sum(${int})`],
          [int !== undefined ? 1 : 0, () => `${ctx.pick(["min", "max"])}(${int})`],
        ])();
      case "num":
        return ctx.weighted<() => string>([
          [num !== undefined ? 2 : 0, () => `sum(${num})`],
          [num !== undefined || int !== undefined ? 2 : 0, () => `avg(${num ?? int})`],
          [num !== undefined ? 1 : 0, () => `${ctx.pick(["min", "max"])}(${num})`],
          [int !== undefined ? 1 : 0, () => `sum(${int})::numeric`],
          [1, () => "count(*)::numeric"],
        ])();
      case "text":
        return ctx.weighted<() => string>([
          [text !== undefined ? 3 : 0, () => `${ctx.pick(["min", "max"])}(${text})`],
          [
            text !== undefined ? 2 : 0,
            () => `${ctx.pick(["min", "max"])}(${text} COLLATE ${ctx.pick(['"C"', '"und-x-icu"'])})`,
          ],
          [
            text !== undefined ? 2 : 0,
            () =>
              `string_agg(${text}, ',' ORDER BY ${text}${ctx.chance(0.4) ? ' COLLATE "und-x-icu"' : ""}${ctx.chance(0.3) ? " DESC" : ""})`,
          ],
          [1, () => `max(${this.literal("text")})`],
        ])();
      case "bool":
        return `${ctx.pick(["bool_and", "bool_or", "every"])}(${this.predicate(env, 2)})`;
      case "real":
        return ctx.weighted<() => string>([
          [real !== undefined ? 2 : 0, () => `${ctx.pick(["avg", "sum", "max"])}(${real})`],
          [int !== undefined ? 1 : 0, () => `avg((${int})::real)`],
          [1, () => `avg(0.1::real)`],
        ])();
      case "tarr":
        return `array_agg(${text ?? "'x'"} ORDER BY ${text ?? "1"})`;
      case "bits": {
        const bits = pickCol("bits");
        return bits !== undefined ? `${ctx.pick(["bit_and", "bit_or"])}(${bits})` : `bit_or(B'0101')`;
      }
      case "ts": {
        const ts = pickCol("ts");
        // Still an aggregate without a timestamp column: a bare literal would make a "scalar"
        // sub-query return every row of its FROM.
        return ts !== undefined ? `${ctx.pick(["min", "max"])}(${ts})` : `max(${this.literal("ts")})`;
      }
      default:
        return "count(*)";
    }
  }

  // ---------------------------------------------------------------- FROM

  /** One FROM item: a table, VALUES, generate_series, a derived table or a CTE. */
  fromItem(env: Env, lateralScope?: readonly Col[]): { node: FromNode; cols: Col[] } {
    const ctx = this.ctx;
    const kind = ctx.weighted<string>([
      [14, "table"],
      [2, "values"],
      [1.5, "series"],
      [env.depth < 2 ? 1.5 : 0, "derived"],
      [this.ctx.ctes.length > 0 ? 4 : 0, "cte"],
      [lateralScope !== undefined && env.depth < 2 ? 3 : 0, "lateral"],
    ]);
    if (kind === "table") {
      const table = ctx.weighted(this.tables.map((t) => [TABLE_WEIGHTS[t.name]!, t] as const));
      const alias = ctx.alias(table.alias);
      return {
        node: { kind: "item", sql: `${table.name} ${alias}` },
        cols: table.cols.map(([name, type]) => ({
          ref: `${alias}.${name}`,
          name,
          type,
          key: table.placement === "partitioned" && (name === "tenant_id" || name === "acct"),
        })),
      };
    }
    if (kind === "values") {
      const alias = ctx.alias("v");
      const rows = Array.from({ length: ctx.int(1, 4) }, (_, i) => {
        const key = ctx.chance(0.1) ? "NULL" : lit(ctx.tenantValue());
        return `(${key}, ${ctx.chance(0.1) ? "NULL" : String(ctx.int(1, 5))}${i === 0 ? "::bigint" : ""})`;
      });
      return {
        node: { kind: "item", sql: `(VALUES ${rows.join(", ")}) AS ${alias}(k, n)` },
        cols: [
          { ref: `${alias}.k`, name: "k", type: "text", key: false },
          { ref: `${alias}.n`, name: "n", type: "int", key: false },
        ],
      };
    }
    if (kind === "series") {
      const alias = ctx.alias("g");
      return {
        node: { kind: "item", sql: `generate_series(1, ${ctx.int(1, 5)}) AS ${alias}(n)` },
        cols: [{ ref: `${alias}.n`, name: "n", type: "int", key: false }],
      };
    }
    if (kind === "cte") {
      const cte = ctx.pick(this.ctx.ctes);
      const alias = ctx.alias("w");
      return {
        node: { kind: "item", sql: `${cte.name} ${alias}` },
        cols: cte.cols.map((c) => ({ ref: `${alias}.${c.name}`, name: c.name, type: c.type, key: false })),
      };
    }
    // derived, or LATERAL correlated with the left side
    const lateral = kind === "lateral";
    const innerEnv: Env = lateral
      ? { scope: [], outer: [...lateralScope!, ...env.outer], depth: env.depth + 1 }
      : { scope: [], outer: [], depth: env.depth + 1 };
    const query = this.select(innerEnv, { correlate: lateral ? lateralScope : undefined });
    const alias = ctx.alias(lateral ? "l" : "d");
    return {
      node: { kind: "item", sql: `${lateral ? "LATERAL " : ""}(${render(query)}) AS ${alias}` },
      cols: query.outputs.map((o, i) => ({
        ref: `${alias}.c${i + 1}`,
        name: `c${i + 1}`,
        type: o.type,
        key: false,
      })),
    };
  }

  /** A join condition between two scopes: on the key, on other columns, or both. */
  joinCondition(left: readonly Col[], right: readonly Col[], equalitiesOnly: boolean): string {
    const ctx = this.ctx;
    const conds: string[] = [];
    const lk = left.filter((c) => KEY_NAMES.has(c.name));
    const rk = right.filter((c) => KEY_NAMES.has(c.name));
    if (lk.length > 0 && rk.length > 0 && ctx.chance(0.55))
      conds.push(`${ctx.pick(lk).ref} = ${ctx.pick(rk).ref}`);
    const pairs: [Col, Col][] = [];
    for (const l of left)
      for (const r of right)
        if (l.type === r.type && ORDERABLE.includes(l.type) && !KEY_NAMES.has(l.name)) pairs.push([l, r]);
    if (pairs.length > 0 && (conds.length === 0 || ctx.chance(0.4))) {
      const [l, r] = ctx.pick(pairs);
      conds.push(`${l.ref} = ${r.ref}`);
    }
    if (!equalitiesOnly && ctx.chance(0.2)) {
      const env: Env = { scope: right, outer: [], depth: 2 };
      conds.push(this.predicate(env, 2));
    }
    if (conds.length === 0)
      return equalitiesOnly && lk.length > 0 && rk.length > 0 ? `${lk[0]!.ref} = ${rk[0]!.ref}` : "true";
    return conds.join(" AND ");
  }

  /** A FROM clause: one item, or joins of several. */
  fromClause(env: Env, joins: number): { node: FromNode; cols: Col[] } {
    const ctx = this.ctx;
    let acc = this.fromItem(env);
    const count =
      joins > 0
        ? joins
        : ctx.weighted<number>([
            [5, 0],
            [4, 1],
            [1.5, 2],
          ]) - (env.depth > 0 ? 0 : 0);
    for (let i = 0; i < count; i++) {
      const lateral = ctx.chance(0.15) && env.depth < 2;
      const right = lateral ? this.fromItem(env, acc.cols) : this.fromItem(env);
      if (right.node.kind === "item" && right.node.sql.startsWith("LATERAL")) {
        const join = ctx.pick(["CROSS JOIN", "LEFT JOIN", "JOIN"]);
        acc = {
          node: {
            kind: "join",
            join,
            left: acc.node,
            right: right.node,
            on: join === "CROSS JOIN" ? undefined : "true",
          },
          cols: [...acc.cols, ...right.cols],
        };
        continue;
      }
      const join = ctx.weighted<string>([
        [4, "JOIN"],
        [4, "LEFT JOIN"],
        [2, "RIGHT JOIN"],
        [2, "FULL JOIN"],
        [0.7, "CROSS JOIN"],
      ]);
      acc = {
        node: {
          kind: "join",
          join,
          left: acc.node,
          right: right.node,
          on:
            join === "CROSS JOIN"
              ? undefined
              : this.joinCondition(acc.cols, right.cols, join === "FULL JOIN"),
        },
        cols: [...acc.cols, ...right.cols],
      };
    }
    return acc;
  }

  // ---------------------------------------------------------------- SELECT

  /** ORDER BY and a limit for `n` outputs (by position), drawn so the answer stays unique. */
  orderLimit(n: number, orderable: boolean, top: boolean): SelectNode["order"] {
    const ctx = this.ctx;
    if (!orderable) return undefined;
    const all = Array.from({ length: n }, (_, i) => {
      const dir = ctx.weighted<string>([
        [4, ""],
        [2, " DESC"],
        [1, " NULLS FIRST"],
        [1, " DESC NULLS LAST"],
      ]);
      return `${i + 1}${dir}`;
    });
    const countText = () => {
      if (this.ctx.params !== undefined && ctx.chance(0.3)) {
        this.ctx.params.push(String(ctx.int(0, 5)));
        return `$${this.ctx.params.length}`;
      }
      return String(ctx.int(0, 5));
    };
    const kind = ctx.weighted<string>([
      [top ? 3 : 4, "none"],
      [top ? 6 : 1, "all"],
      [3, "limit"],
      [1, "offset"],
      [1, "fetch"],
      [2, "ties"],
      [1, "ties-offset"],
      [top ? 1 : 0, "prefix"],
      [top ? 0.15 : 0, "negative"],
      [0.2, "odd"],
    ]);
    switch (kind) {
      case "none":
        return undefined;
      case "all":
        return { orderBy: all, total: true };
      case "limit":
        return {
          orderBy: all,
          total: true,
          limit: countText(),
          offset: ctx.chance(0.3) ? countText() : undefined,
        };
      case "offset":
        return { orderBy: all, total: true, offset: countText() };
      case "fetch":
        return {
          orderBy: all,
          total: true,
          offset: ctx.chance(0.5) ? countText() : undefined,
          fetch: { count: countText(), ties: false },
        };
      case "ties":
        return {
          orderBy: all.slice(0, ctx.int(1, n)),
          total: false,
          fetch: { count: countText(), ties: true },
        };
      case "ties-offset":
        return { orderBy: all, total: true, offset: countText(), fetch: { count: countText(), ties: true } };
      case "prefix":
        return { orderBy: all.slice(0, Math.max(1, n - 1)), total: n === 1 };
      case "negative":
        return { orderBy: all, total: true, limit: String(ctx.int(1, 5)), offset: "-1" };
      default:
        return ctx.pick([
          { orderBy: all, total: true, limit: "ALL" },
          { orderBy: all, total: true, limit: "NULL" },
          { orderBy: all, total: true, limit: "0" },
          { orderBy: all, total: true, offset: "0" },
        ]);
    }
  }

  /**
   * A SELECT over a fresh FROM clause. `want` fixes the output types (set operations);
   * `correlate` makes it a LATERAL sub-query of those columns; `plain` forbids aggregates,
   * windows, DISTINCT and limits at the top (TLP's queries).
   */
  select(
    env: Env,
    options: {
      want?: readonly SqlType[] | undefined;
      correlate?: readonly Col[] | undefined;
      plain?: boolean;
      top?: boolean;
    } = {},
  ): SelectNode {
    const ctx = this.ctx;
    const from = this.fromClause(env, 0);
    const scopeEnv: Env = { ...env, scope: from.cols };
    const where: string[] = [];
    if (options.correlate !== undefined) {
      const corr = this.correlation(from.cols, options.correlate);
      if (corr !== undefined) where.push(corr);
    }
    const conjuncts = ctx.weighted<number>([
      [3, 0],
      [5, 1],
      [2, 2],
    ]);
    for (let i = 0; i < conjuncts; i++) where.push(this.predicate(scopeEnv));
    const shape = options.plain
      ? "plain"
      : ctx.weighted<string>([
          [6, "plain"],
          [4, "group"],
          [1.5, "window"],
          [1, "aggregate"],
        ]);
    const types = (count: number) =>
      options.want ??
      Array.from({ length: count }, () => {
        const visible = from.cols.map((c) => c.type);
        return ctx.chance(0.8) && visible.length > 0 ? ctx.pick(visible) : ctx.pick(SET_TYPES);
      });
    let outputs: Output[];
    let groupBy: string | undefined;
    let having: string | undefined;
    let aggregated = false;
    let windowed = false;
    if (shape === "plain" || shape === "window") {
      outputs = types(ctx.int(1, 4)).map((type) => ({ expr: this.outputExpr(type, scopeEnv), type }));
      if (shape === "window" && options.want === undefined) {
        windowed = true;
        outputs.push({ expr: this.windowExpr(scopeEnv, outputs), type: "int" });
      }
    } else if (shape === "aggregate") {
      aggregated = true;
      outputs = types(ctx.int(1, 3)).map((type) => ({ expr: this.aggregate(type, scopeEnv), type }));
      if (ctx.chance(0.3)) having = `${this.aggregate("int", scopeEnv)} > ${ctx.int(0, 3)}`;
    } else {
      aggregated = true;
      const want = options.want;
      const groupCount = want !== undefined ? Math.max(1, Math.min(want.length - 1, 2)) : ctx.int(1, 2);
      const groupTypes = want?.slice(0, groupCount) ?? types(groupCount);
      const groups = groupTypes.map((type) => {
        const cols = this.colsOf(scopeEnv, type);
        const base = cols.length > 0 && ctx.chance(0.85) ? ctx.pick(cols).ref : this.expr(type, scopeEnv, 1);
        return { expr: type === "text" && ctx.chance(0.15) ? `${base} COLLATE "C"` : base, type };
      });
      const aggTypes = want?.slice(groupCount) ?? types(ctx.int(1, 2));
      outputs = [...groups, ...aggTypes.map((type) => ({ expr: this.aggregate(type, scopeEnv), type }))];
      const g = groups.map((x) => x.expr);
      groupBy = ctx.weighted<() => string>([
        [6, () => g.join(", ")],
        [1, () => `ROLLUP (${g.join(", ")})`],
        [1, () => `GROUPING SETS ((${g.join(", ")}), ${g.length > 1 ? `(${g[1]}), ` : ""}())`],
        [0.5, () => `CUBE (${g.join(", ")})`],
      ])();
      if (ctx.chance(0.3))
        having = `${this.aggregate("int", scopeEnv)} ${ctx.pick([">", ">=", "<"])} ${ctx.int(0, 3)}`;
      if (want === undefined && ctx.chance(0.15)) {
        windowed = true;
        outputs.push({ expr: `sum(count(*)) OVER ()`, type: "num" });
      }
    }
    const node: SelectNode = {
      kind: "select",
      outputs,
      from: from.node,
      where,
      groupBy,
      having,
      aggregated,
      windowed,
    };
    if (options.plain) return node;
    let result: SelectNode = node;
    const distinctRoll = ctx.chance(0.15);
    if (distinctRoll && !windowed) {
      if (ctx.chance(0.35) && outputs.length > 1) {
        const order = this.orderLimit(outputs.length, true, options.top === true) ?? {
          orderBy: outputs.map((_, i) => String(i + 1)),
          total: true,
        };
        if (groupingSets(groupBy)) return { ...node, distinct: "all" };
        // DISTINCT ON needs the ORDER BY to start with its expressions: order by every output.
        const orderBy = outputs.map((_, i) => order.orderBy[i] ?? String(i + 1));
        return {
          ...node,
          distinct: { on: ["1"] },
          order: {
            ...order,
            orderBy,
            total: true,
            fetch: order.fetch?.ties ? { ...order.fetch, ties: false } : order.fetch,
          },
        };
      }
      result = { ...node, distinct: "all" };
    }
    const orderable = outputs.every((o) => o.type !== "comp" || ctx.chance(0.5));
    const order = this.orderLimit(outputs.length, orderable, options.top === true);
    if (groupingSets(groupBy) && order !== undefined) {
      // PostgreSQL 15 may drop a sort key it believes constant (WHERE status = 'open') although
      // ROLLUP makes it NULL in some rows: its own order, and so any limit, depends on the plan.
      return { ...result, order: { orderBy: order.orderBy, total: false } };
    }
    if (aggregated && groupBy === undefined && order?.fetch?.ties === true) {
      // PostgreSQL 15 raises 21000 for `SELECT min(name) FROM t ORDER BY 1 FETCH FIRST 1 ROWS WITH
      // TIES` (a text aggregate, no GROUP BY): a server bug no proxy should copy. The statement has
      // one row, so there are no ties to keep.
      return { ...result, order: { ...order, fetch: { ...order.fetch, ties: false } } };
    }
    return { ...result, order };
  }

  /** An output expression of `type`, now and then with a collation or a whole row. */
  outputExpr(type: SqlType, env: Env): string {
    const ctx = this.ctx;
    const e = this.expr(type, env, 1);
    if (type === "text" && ctx.chance(0.1)) return `${e} COLLATE ${ctx.pick(['"C"', '"und-x-icu"'])}`;
    return e;
  }

  /** A window function whose answer does not depend on the order of rows that tie. */
  windowExpr(env: Env, outputs: readonly Output[]): string {
    const ctx = this.ctx;
    const part = env.scope.filter((c) => ORDERABLE.includes(c.type) || c.type === "bool");
    const partition = part.length > 0 && ctx.chance(0.7) ? `PARTITION BY ${ctx.pick(part).ref}` : "";
    const ordered = outputs.map((o) => o.expr).join(", ");
    const orderable = env.scope.filter((c) => ORDERABLE.includes(c.type));
    const someOrder = orderable.length > 0 ? ctx.pick(orderable).ref : "1";
    const ints = this.colsOf(env, "int");
    return ctx.weighted<() => string>([
      [2, () => `rank() OVER (${partition} ORDER BY ${someOrder})`],
      [1, () => `dense_rank() OVER (${partition} ORDER BY ${someOrder} DESC)`],
      [2, () => `count(*) OVER (${partition})`],
      [ints.length > 0 ? 2 : 0, () => `sum(${ctx.pick(ints).ref}) OVER (${partition} ORDER BY ${someOrder})`],
      [2, () => `row_number() OVER (${partition} ORDER BY ${ordered})`],
      [
        1,
        () =>
          `count(*) OVER (ORDER BY ${someOrder} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - count(*) OVER (ORDER BY ${someOrder} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) + rank() OVER (ORDER BY ${someOrder})`,
      ],
    ])();
  }

  /** A set operation of two SELECTs with the same output types. */
  setOperation(env: Env, depth = 0): QueryNode {
    const ctx = this.ctx;
    const want = Array.from({ length: ctx.int(1, 3) }, () => ctx.pick(SET_TYPES));
    const side = (): QueryNode =>
      depth < 1 && ctx.chance(0.15)
        ? this.setOperationWith(env, want, depth + 1)
        : this.select(env, { want });
    const left = side();
    const right = side();
    const op = ctx.pick([
      "UNION",
      "UNION ALL",
      "INTERSECT",
      "INTERSECT ALL",
      "EXCEPT",
      "EXCEPT ALL",
      "UNION ALL",
    ]);
    return {
      kind: "setop",
      op,
      left,
      right,
      outputs: want.map((type) => ({ expr: "", type })),
      order: this.orderLimit(want.length, true, depth === 0),
    };
  }

  setOperationWith(env: Env, want: readonly SqlType[], _depth: number): QueryNode {
    const ctx = this.ctx;
    return {
      kind: "setop",
      op: ctx.pick(["UNION", "UNION ALL", "EXCEPT"]),
      left: this.select(env, { want }),
      right: this.select(env, { want }),
      outputs: want.map((type) => ({ expr: "", type })),
    };
  }

  // ---------------------------------------------------------------- CTEs

  /** One or two CTEs added to the context; returns their definitions. */
  withClause(): { recursive: boolean; ctes: string[] } {
    const ctx = this.ctx;
    const ctes: string[] = [];
    let recursive = false;
    if (ctx.chance(0.45)) {
      recursive = true;
      ctes.push(this.recursiveCte());
    }
    if (!recursive || ctx.chance(0.3)) {
      const name = `q${ctes.length + 1}`;
      const query = this.select({ scope: [], outer: [], depth: 1 });
      const materialized = ctx.weighted<string>([
        [4, ""],
        [1, "MATERIALIZED "],
        [1, "NOT MATERIALIZED "],
      ]);
      ctes.push(`${name} AS ${materialized}(${render(query)})`);
      this.ctx.ctes.push({ name, cols: query.outputs.map((o, i) => ({ name: `c${i + 1}`, type: o.type })) });
    }
    return { recursive, ctes };
  }

  /** A recursive CTE: a counter, or a walk that may cross keys (and so regions). */
  recursiveCte(): string {
    const ctx = this.ctx;
    const name = "r";
    const key = () => this.keyPredicate({ ref: "u0.tenant_id", name: "tenant_id", type: "text", key: true });
    const depth = ctx.int(1, 4);
    const variants: [string, { name: string; type: SqlType }[]][] = [
      [
        `${name}(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM ${name} WHERE n < ${depth + 1})`,
        [{ name: "n", type: "int" }],
      ],
      [
        `${name}(tenant_id, id, depth) AS (SELECT u0.tenant_id, u0.id, 0 FROM users u0 WHERE ${key()} UNION SELECT u1.tenant_id, u1.id, ${name}.depth + 1 FROM users u1 JOIN ${name} ON u1.id = ${name}.id + 1${ctx.chance(0.5) ? ` AND u1.tenant_id <> ${name}.tenant_id` : ""} WHERE ${name}.depth < ${depth})`,
        [
          { name: "tenant_id", type: "text" },
          { name: "id", type: "int" },
          { name: "depth", type: "int" },
        ],
      ],
      [
        `${name}(tenant_id, id, buyer, depth) AS (SELECT o0.tenant_id, o0.id, o0.buyer, 1 FROM orders o0 WHERE ${this.keyPredicate({ ref: "o0.tenant_id", name: "tenant_id", type: "text", key: true })} UNION ALL SELECT o1.tenant_id, o1.id, o1.buyer, ${name}.depth + 1 FROM orders o1 JOIN ${name} ON o1.user_id = ${name}.buyer WHERE ${name}.depth < ${depth})`,
        [
          { name: "tenant_id", type: "text" },
          { name: "id", type: "int" },
          { name: "buyer", type: "int" },
          { name: "depth", type: "int" },
        ],
      ],
      [
        `${name}(k) AS (SELECT min(u0.tenant_id) FROM users u0 UNION ALL SELECT (SELECT min(u1.tenant_id) FROM users u1 WHERE u1.tenant_id > ${name}.k) FROM ${name} WHERE ${name}.k IS NOT NULL)`,
        [{ name: "k", type: "text" }],
      ],
    ];
    const [sql, cols] = ctx.pick(variants);
    this.ctx.ctes.push({ name, cols });
    return sql;
  }
}

/**
 * A write with RETURNING inside a transaction that is rolled back: BEGIN; the write; a read of what
 * it changed; ROLLBACK; the same read again (a write that escaped its transaction shows there).
 * Every column is given, so no default (now(), an identity) differs between servers.
 */
function writeSteps(gen: Generator, ctx: Context): GrammarStep[] {
  const key = (alias: string) =>
    gen.keyPredicate({ ref: `${alias}.tenant_id`, name: "tenant_id", type: "text", key: true });
  const tenant = () => lit(ctx.tenantValue());
  const userRow = (id: number) =>
    `(${tenant()}, ${id}, ${lit(ctx.pick(USER_NAMES))}, ${lit(ctx.pick(COUNTRY_CODES))}, ${ctx.int(18, 70)}, NULL, ${ctx.pick(["true", "false"])}, '2025-01-01 00:00:00+00')`;
  const choices: (readonly [number, () => { write: string; read: string }])[] = [
    [
      3,
      () => ({
        write: `INSERT INTO users (tenant_id, id, name, country, age, last_seen, active, created_at) VALUES ${Array.from({ length: ctx.int(1, 3) }, (_, i) => userRow(100 + i)).join(", ")} RETURNING tenant_id, id, name`,
        read: "SELECT tenant_id, id, name FROM users WHERE id >= 100",
      }),
    ],
    [
      3,
      () => {
        const where = ctx.chance(0.7)
          ? key("u")
          : gen.predicate({ scope: scopeOfTable("users", "u"), outer: [], depth: 1 });
        return {
          write: `UPDATE users u SET age = coalesce(u.age, 0) + 1 WHERE ${where} RETURNING u.tenant_id, u.id, u.age`,
          read: `SELECT count(*), sum(age) FROM users`,
        };
      },
    ],
    [
      2,
      () => ({
        write: `DELETE FROM orders o WHERE ${ctx.chance(0.7) ? key("o") : `o.status = ${lit(ctx.pick(ORDER_STATUSES))}`} RETURNING o.tenant_id, o.id, o.total`,
        read: "SELECT count(*), sum(total) FROM orders",
      }),
    ],
    [
      2,
      () => ({
        write: `UPDATE currencies SET digits = digits + 1 WHERE code ${ctx.pick(["= 'EUR'", "IN ('USD', 'JPY')", "<> 'CHF'"])} RETURNING code, digits`,
        read: "SELECT code, digits FROM currencies",
      }),
    ],
    [
      1,
      () => ({
        write: `INSERT INTO currencies (code, name, digits) VALUES ('XAU', 'gold', 3)${ctx.chance(0.5) ? ", ('XAG', 'silver', 3)" : ""} RETURNING code, name`,
        read: "SELECT count(*) FROM currencies",
      }),
    ],
    [
      1,
      () => ({
        write: `UPDATE fx_rates SET rate = rate * 2 WHERE base = ${lit(ctx.pick(["EUR", "USD"]))} RETURNING base, quote, rate`,
        read: "SELECT sum(rate) FROM fx_rates",
      }),
    ],
    [
      1,
      () => ({
        write: `INSERT INTO eu_audit (tenant_id, action, at) VALUES (${tenant()}, 'login', '2025-01-01 00:00:00+00') RETURNING tenant_id, action, at`,
        read: "SELECT count(*) FROM eu_audit",
      }),
    ],
    [
      1,
      () => ({
        write: `UPDATE orders o SET total = o.total + 1 FROM users u WHERE u.tenant_id = o.tenant_id AND u.id = o.user_id AND ${key("u")} RETURNING o.tenant_id, o.id, o.total`,
        read: "SELECT sum(total) FROM orders",
      }),
    ],
  ];
  const { write, read } = ctx.weighted(choices)();
  return [
    { sql: "BEGIN", ordered: false },
    { sql: write, ordered: false },
    { sql: read, ordered: false },
    { sql: "ROLLBACK", ordered: false },
    { sql: read, ordered: false },
  ];
}

function scopeOfTable(name: string, alias: string): Col[] {
  const def = [...TABLES, ...INT_TABLES].find((t) => t.name === name)!;
  return def.cols.map(([col, type]) => ({
    ref: `${alias}.${col}`,
    name: col,
    type,
    key: def.placement === "partitioned" && (col === "tenant_id" || col === "acct"),
  }));
}

/**
 * Keeps only the parameters the text uses (a clause drawn and then dropped may have taken one),
 * numbered again from $1 in order of first use.
 */
function bindUsed(
  sql: string,
  values: readonly string[] | undefined,
): { sql: string; values: string[] | undefined; renumbered: boolean } {
  if (values === undefined) return { sql, values: undefined, renumbered: false };
  const order: number[] = [];
  for (const match of sql.matchAll(/\$(\d+)/g)) {
    const n = Number(match[1]);
    if (!order.includes(n)) order.push(n);
  }
  if (order.length === values.length && order.every((n, i) => n === i + 1))
    return { sql, values: [...values], renumbered: false };
  const renumber = new Map(order.map((n, i) => [n, i + 1]));
  return {
    sql: sql.replace(/\$(\d+)/g, (_, n: string) => `$${renumber.get(Number(n))}`),
    values: order.map((n) => values[n - 1]!),
    renumbered: true,
  };
}

function groupingSets(groupBy: string | undefined): boolean {
  return groupBy !== undefined && /^(ROLLUP|CUBE|GROUPING SETS)/.test(groupBy);
}

// ---------------------------------------------------------------- statements

/** What is graded for one generated statement. */
export interface GrammarStep {
  readonly sql: string;
  /** Parameters, bound as text by node-postgres (untyped: PostgreSQL infers their types). */
  readonly values?: readonly string[] | undefined;
  readonly ordered: boolean;
}

export type GrammarKind =
  | "select"
  | "setop"
  | "no-from"
  | "with"
  | "params"
  | "prepare"
  | "tlp"
  | "norec"
  | "int-key"
  | "write"
  | "multi";

export interface GrammarStatement {
  readonly seed: number;
  readonly index: number;
  readonly kind: GrammarKind;
  /** Which proxy and database: the text-keyed example world, or the integer-keyed one. */
  readonly world: "text" | "int";
  readonly steps: readonly GrammarStep[];
  /** For single-step statements: the tree, so a wrong one can be shrunk. */
  readonly query?: QueryNode | undefined;
  /** TLP: steps 1..3 must add up, as a multiset, to step 0 (set-wise when `distinct`). */
  readonly tlp?: { readonly distinct: boolean } | undefined;
  /** NoREC: step 0 and step 1 must return the same count. */
  readonly norec?: true | undefined;
}

const KINDS: readonly (readonly [number, GrammarKind])[] = [
  [40, "select"],
  [10, "setop"],
  [6, "no-from"],
  [10, "with"],
  [8, "params"],
  [6, "prepare"],
  [12, "tlp"],
  [6, "norec"],
  [8, "int-key"],
  [6, "write"],
  [3, "multi"],
];

const TOP: Env = { scope: [], outer: [], depth: 0 };

/** The statement at `index` for `seed`: a pure function of the two. */
export function generateGrammarStatement(seed: number, index: number): GrammarStatement {
  const rng = Prng.forStatement(seed ^ 0x5eed_0a11, index);
  const ctx = new Context(rng);
  const gen = new Generator(ctx);
  const kind = ctx.weighted(KINDS);
  const single = (query: QueryNode, values?: string[]): GrammarStatement => {
    const bound = bindUsed(render(query), values);
    return {
      seed,
      index,
      kind,
      world: kind === "int-key" ? "int" : "text",
      // A renumbered text no longer matches its tree's parameter numbers: it is not shrunk.
      query: bound.renumbered ? undefined : query,
      steps: [
        {
          sql: bound.sql,
          values: bound.values,
          ordered: query.order?.total === true && query.order.orderBy.length > 0,
        },
      ],
    };
  };
  switch (kind) {
    case "select":
      return single(gen.select(TOP, { top: true }));
    case "int-key": {
      const intGen = new Generator(ctx, INT_TABLES);
      if (ctx.chance(0.4)) ctx.params = [];
      const query = ctx.chance(0.15) ? intGen.setOperation(TOP) : intGen.select(TOP, { top: true });
      return single(query, ctx.params);
    }
    case "setop":
      return single(gen.setOperation(TOP));
    case "no-from": {
      const sub = gen.subquery(TOP, undefined);
      const scalar = gen.scalarSubquery(ctx.pick(["int", "text", "num"] as const), TOP, true);
      const query: SelectNode = ctx.weighted<() => SelectNode>([
        [
          3,
          () => ({
            kind: "select",
            outputs: [{ expr: `${ctx.pick(["EXISTS", "NOT EXISTS"])} (${render(sub)})`, type: "bool" }],
            where: [],
            aggregated: false,
            windowed: false,
          }),
        ],
        [
          2,
          () => ({
            kind: "select",
            outputs: [{ expr: `(${render(scalar)})`, type: "int" }],
            where: [],
            aggregated: false,
            windowed: false,
          }),
        ],
        [
          2,
          () => ({
            kind: "select",
            outputs: [{ expr: ctx.pick(["1", "'x'", "now() IS NOT NULL"]), type: "int" }],
            where: [`${ctx.pick(["EXISTS", "NOT EXISTS"])} (${render(sub)})`],
            aggregated: false,
            windowed: false,
          }),
        ],
        [
          1,
          () => ({
            kind: "select",
            outputs: [
              { expr: `(SELECT count(*) FROM (${render(sub)}) AS s)`, type: "int" },
              { expr: `(${render(scalar)})`, type: "int" },
            ],
            where: [],
            aggregated: false,
            windowed: false,
          }),
        ],
      ])();
      return single(query);
    }
    case "with": {
      const w = gen.withClause();
      const body = ctx.chance(0.2) ? gen.setOperation(TOP) : gen.select(TOP, { top: true });
      return single({ ...body, with: w });
    }
    case "params": {
      ctx.params = [];
      const query = gen.select(TOP, { top: true });
      return single(query, ctx.params);
    }
    case "prepare": {
      ctx.params = [];
      const query = gen.select(TOP, { top: true });
      const bound = bindUsed(render(query), ctx.params);
      const params = bound.values ?? [];
      const name = `oracle_p${index}`;
      const typed = params.length > 0 && ctx.chance(0.4);
      const ordered = query.order?.total === true && query.order.orderBy.length > 0;
      const args = params.map((value) => lit(value)).join(", ");
      const execute = `EXECUTE ${name}${params.length > 0 ? `(${args})` : ""}`;
      const steps: GrammarStep[] = [
        {
          sql: `PREPARE ${name}${typed ? `(${params.map((_, i) => (/^\d+$/.test(params[i]!) ? "bigint" : "text")).join(", ")})` : ""} AS ${bound.sql}`,
          ordered: false,
        },
        { sql: execute, ordered },
      ];
      if (ctx.chance(0.4)) steps.push({ sql: execute, ordered });
      steps.push({ sql: `DEALLOCATE ${name}`, ordered: false });
      return { seed, index, kind, world: "text", steps };
    }
    case "tlp": {
      const query = gen.select(TOP, { plain: true });
      const distinct = ctx.chance(0.2);
      const base: SelectNode = distinct ? { ...query, distinct: "all" } : query;
      const scope = scopeOf(query, gen);
      const p = gen.predicate({ scope, outer: [], depth: 0 });
      const steps = [
        render(base),
        render(base, p),
        render(base, `NOT (${p})`),
        render(base, `(${p}) IS NULL`),
      ].map((sql) => ({ sql, ordered: false }));
      return { seed, index, kind, world: "text", steps, tlp: { distinct } };
    }
    case "write":
      return { seed, index, kind, world: "text", steps: writeSteps(gen, ctx) };
    case "multi": {
      // Several statements in one Query message, answered in order.
      const parts: string[] = [];
      for (let i = 0; i < ctx.int(2, 3); i++) {
        let query = gen.select(TOP, { top: true });
        for (let tries = 0; tries < 5 && query.outputs.some((o) => o.type === "real"); tries++)
          query = gen.select(TOP, { top: true });
        if (query.outputs.some((o) => o.type === "real")) continue;
        parts.push(render(query));
      }
      if (parts.length === 0) parts.push("SELECT count(*) AS c1 FROM users");
      return { seed, index, kind, world: "text", steps: [{ sql: parts.join("; "), ordered: false }] };
    }
    case "norec": {
      const from = gen.fromClause(TOP, ctx.int(0, 1));
      const p = gen.predicate({ scope: from.cols, outer: [], depth: 0 });
      const fromSql = render({
        kind: "select",
        outputs: [{ expr: "1", type: "int" }],
        from: from.node,
        where: [],
        aggregated: false,
        windowed: false,
      }).replace(/^SELECT 1 AS c1 FROM /, "");
      return {
        seed,
        index,
        kind,
        world: "text",
        steps: [
          { sql: `SELECT count(*) AS n FROM ${fromSql} WHERE ${p}`, ordered: false },
          { sql: `SELECT count(CASE WHEN ${p} THEN 1 END) AS n FROM ${fromSql}`, ordered: false },
        ],
        norec: true,
      };
    }
  }
}

/** The columns a plain query's FROM exposes (recomputed by walking its aliases). */
function scopeOf(query: SelectNode, _gen: Generator): Col[] {
  const cols: Col[] = [];
  const walk = (node: FromNode | undefined) => {
    if (node === undefined) return;
    if (node.kind === "join") {
      walk(node.left);
      walk(node.right);
      return;
    }
    const table = /^([a-z_]+) ([a-z]+\d+)$/.exec(node.sql);
    if (table !== null) {
      const def = [...TABLES, ...INT_TABLES].find((t) => t.name === table[1]);
      if (def !== undefined) {
        for (const [name, type] of def.cols)
          cols.push({
            ref: `${table[2]}.${name}`,
            name,
            type,
            key: def.placement === "partitioned" && (name === "tenant_id" || name === "acct"),
          });
      }
      return;
    }
    const values = /AS (v\d+)\(k, n\)$/.exec(node.sql);
    if (values !== null) {
      cols.push(
        { ref: `${values[1]}.k`, name: "k", type: "text", key: false },
        { ref: `${values[1]}.n`, name: "n", type: "int", key: false },
      );
      return;
    }
    const series = /AS (g\d+)\(n\)$/.exec(node.sql);
    if (series !== null) cols.push({ ref: `${series[1]}.n`, name: "n", type: "int", key: false });
  };
  walk(query.from);
  return cols;
}

/** Statements `start` .. `start + count - 1` of `seed`. */
export function generateGrammarStatements(seed: number, count: number, start = 0): GrammarStatement[] {
  return Array.from({ length: count }, (_, offset) => generateGrammarStatement(seed, start + offset));
}

/** The statement's SQL as one text. */
export function grammarText(statement: GrammarStatement): string {
  return statement.steps
    .map((step) =>
      step.values !== undefined && step.values.length > 0
        ? `${step.sql}  -- $ = ${JSON.stringify(step.values)}`
        : step.sql,
    )
    .join(";\n  ");
}
