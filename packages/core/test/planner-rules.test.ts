import type { KeyValue } from "@geo/sql";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MemoryDirectory,
  type Plan,
  parseConfig,
  parseDirectoryTsv,
  placeKey,
  plan,
  shardFor,
  Topology,
} from "../src/index.js";
import { analysis, any, concat, gatherOf, keys, lit, param } from "./analysis-fixture.js";

const TOPOLOGY_TOML = `
[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "eu" }

[[topology.regions]]
id = "us-east"
primary = { host = "us" }

[[topology.regions]]
id = "ap-south"
primary = { host = "ap" }

[[tables]]
table = "users"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "orders"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "vault"
placement = "geo_partitioned"
key = "tenant_id"
residency = "strict"

[[tables]]
table = "currencies"
placement = "global_replicated"

[[tables]]
table = "fx_rates"
placement = "global_replicated"
writer = "us-east"

[[tables]]
table = "eu_audit"
placement = "pinned"
region = "eu-west"
residency = "strict"
`;

const topology = Topology.fromConfig(parseConfig(TOPOLOGY_TOML));
const directory = new MemoryDirectory([
  ["alice", "eu-west"],
  ["bob", "us-east"],
  ["chandra", "ap-south"],
]);
const context = { topology, directory };

function regionsOf(decided: Plan): readonly string[] {
  switch (decided.kind) {
    case "single":
      return [decided.region];
    case "scatter":
    case "distributed-write":
      return decided.regions;
    default:
      return [];
  }
}

function refusalOf(decided: Plan): string | undefined {
  return decided.kind === "refused" ? decided.refusal.code : undefined;
}

describe("planner rules", () => {
  it("sends a read of one key to that key's region", () => {
    const decided = plan(analysis({ tables: [{ name: "users", key: keys("bob") }] }), context);
    expect(decided).toEqual({ kind: "single", region: "us-east", access: "read-only", sql: "<select>" });
  });

  it("scatters a read of two keys over their two regions", () => {
    const decided = plan(analysis({ tables: [{ name: "users", key: keys("alice", "bob") }] }), context);
    expect(decided.kind).toBe("scatter");
    expect(regionsOf(decided)).toEqual(["eu-west", "us-east"]);
  });

  it("scatters an unconstrained read over every region", () => {
    expect(regionsOf(plan(analysis({ tables: [{ name: "users" }] }), context))).toEqual([
      "ap-south",
      "eu-west",
      "us-east",
    ]);
  });

  it("sends a key with no directory entry to the home region", () => {
    expect(plan(analysis({ tables: [{ name: "users", key: keys("zoe") }] }), context)).toMatchObject({
      kind: "single",
      region: "eu-west",
    });
  });

  it("looks everywhere for an unlisted key when told other proxies may have created it", () => {
    const decided = plan(analysis({ tables: [{ name: "users", key: keys("zoe") }] }), {
      ...context,
      unlistedKeys: "anywhere",
    });
    expect(regionsOf(decided)).toHaveLength(3);
  });

  it("runs a statement matching no key in one region", () => {
    expect(plan(analysis({ tables: [{ name: "users", key: keys() }] }), context)).toMatchObject({
      kind: "single",
      region: "eu-west",
    });
  });

  it("defers a statement whose key is a parameter until it is bound, then routes it", () => {
    const prepared = analysis({ tables: [{ name: "users", key: keys(param(1)) }] });
    expect(plan(prepared, context)).toEqual({ kind: "deferred", params: [1] });
    expect(plan(prepared, { ...context, params: ["bob"] })).toMatchObject({
      kind: "single",
      region: "us-east",
    });
    expect(plan(prepared, { ...context, params: [null] })).toMatchObject({
      kind: "single",
      region: "eu-west",
    });
  });

  it("routes = ANY($1) by every element of the bound array, given as text or already split", () => {
    const prepared = analysis({
      tables: [{ name: "users", key: { kind: "values", values: [{ kind: "param-array", index: 1 }] } }],
    });
    expect(regionsOf(plan(prepared, { ...context, params: ['{alice,"chandra"}'] }))).toEqual([
      "ap-south",
      "eu-west",
    ]);
    expect(regionsOf(plan(prepared, { ...context, params: [["bob", null]] }))).toEqual(["us-east"]);
    expect(regionsOf(plan(prepared, { ...context, params: ["{{nested}}"] }))).toHaveLength(3);
  });

  it("reads a replicated table from the home region", () => {
    expect(plan(analysis({ tables: [{ name: "currencies" }, { name: "fx_rates" }] }), context)).toMatchObject(
      {
        kind: "single",
        region: "eu-west",
        access: "read-only",
      },
    );
  });

  it("writes a replicated table in every region in one two-phase commit", () => {
    const decided = plan(
      analysis({ kind: "update", tables: [{ name: "currencies", access: "write" }] }),
      context,
    );
    expect(decided).toMatchObject({ kind: "distributed-write", commit: "two-phase" });
    expect(regionsOf(decided)).toEqual(["ap-south", "eu-west", "us-east"]);
  });

  it("writes a replicated table that has a writer at the writer alone", () => {
    expect(
      plan(analysis({ kind: "insert", tables: [{ name: "fx_rates", access: "write" }] }), context),
    ).toMatchObject({
      kind: "single",
      region: "us-east",
      access: "read-write",
    });
  });

  it("refuses to write each copy of a replicated table from rows that differ between regions", () => {
    const decided = plan(
      analysis({ kind: "insert", tables: [{ name: "currencies", access: "write" }, { name: "orders" }] }),
      context,
    );
    expect(refusalOf(decided)).toBe("replicated-write-from-rows");
  });

  it("refuses a replicated write whose volatile function would differ per copy", () => {
    const decided = plan(
      analysis({
        kind: "update",
        tables: [{ name: "currencies", access: "write" }],
        volatileFunctions: ["random"],
      }),
      context,
    );
    expect(refusalOf(decided)).toBe("replicated-write-volatile");
    expect(decided.kind === "refused" && decided.refusal.sqlstate).toBe("0A000");
  });

  it("keeps a pinned table in its region", () => {
    expect(plan(analysis({ tables: [{ name: "eu_audit" }] }), context)).toMatchObject({
      kind: "single",
      region: "eu-west",
    });
  });

  it("refuses a table with no policy, naming it, unless a default placement is configured", () => {
    const decided = plan(analysis({ tables: [{ name: "invoices" }] }), context);
    expect(decided.kind === "refused" && decided.refusal.reason).toMatch(/invoices/);
    const lenient = Topology.fromConfig(
      parseConfig(`${TOPOLOGY_TOML}\n[routing]\ndefault_placement = { placement = "pinned" }\n`),
    );
    expect(
      plan(analysis({ tables: [{ name: "invoices" }] }), { topology: lenient, directory }),
    ).toMatchObject({
      kind: "single",
      region: "eu-west",
    });
  });

  it("matches schema-qualified public names to unqualified policies and reads catalogs at home", () => {
    expect(
      plan(analysis({ tables: [{ name: "users", schema: "public", key: keys("bob") }] }), context),
    ).toMatchObject({
      region: "us-east",
    });
    expect(plan(analysis({ tables: [{ name: "pg_class", schema: "pg_catalog" }] }), context)).toMatchObject({
      region: "eu-west",
    });
    expect(refusalOf(plan(analysis({ tables: [{ name: "users", schema: "audit" }] }), context))).toBe(
      "unplaced-table",
    );
  });

  it("runs key-linked geo-partitioned tables in every region at once", () => {
    const decided = plan(
      analysis({
        tables: [{ name: "users" }, { name: "orders" }],
        links: [{ left: 0, right: 1, via: "join" }],
      }),
      context,
    );
    expect(decided.kind).toBe("scatter");
    expect(regionsOf(decided)).toHaveLength(3);
  });

  it("refuses geo-partitioned tables joined on other columns across regions unless the rows are gathered", () => {
    const joined = { tables: [{ name: "users" }, { name: "orders" }], crossJoins: [{ left: 0, right: 1 }] };
    const refusedJoin = plan(analysis(joined), context);
    expect(refusalOf(refusedJoin)).toBe("cross-region-join");
    expect(refusedJoin.kind === "refused" && refusedJoin.refusal.reason).toBe(
      "the statement joins users, orders across regions ap-south, eu-west, us-east",
    );
    const gathered = plan(analysis({ ...joined, gather: gatherOf([0, 1]) }), context);
    expect(gathered).toMatchObject({ kind: "scatter", gatherSources: [{ table: 0 }, { table: 1 }] });
  });

  it("answers tables joined on other columns in one region when both are constrained to it", () => {
    const decided = plan(
      analysis({
        tables: [
          { name: "users", key: keys("bob") },
          { name: "orders", key: keys("bob") },
        ],
        crossJoins: [{ left: 0, right: 1 }],
      }),
      context,
    );
    expect(decided).toMatchObject({ kind: "single", region: "us-east" });
  });

  it("treats unlinked geo-partitioned tables in one FROM list as meeting across regions", () => {
    expect(refusalOf(plan(analysis({ tables: [{ name: "users" }, { name: "orders" }] }), context))).toBe(
      "cross-region-join",
    );
  });

  it("lets the branches of a set operation run apart", () => {
    const decided = plan(
      analysis({
        tables: [
          { name: "users", block: 1 },
          { name: "orders", block: 2 },
        ],
        blocks: [{ role: "top" }, { parent: 0, role: "set-operand" }, { parent: 0, role: "set-operand" }],
      }),
      context,
    );
    expect(decided.kind).toBe("scatter");
  });

  it("refuses a pinned table read together with rows of other regions unless gathered", () => {
    expect(
      refusalOf(
        plan(
          analysis({
            tables: [{ name: "users", block: 0 }, { name: "currencies" }, { name: "eu_audit", block: 1 }],
            blocks: [{ role: "top" }, { parent: 0, role: "sublink" }],
          }),
          context,
        ),
      ),
    ).toBe("cross-region-join");
  });

  it("refuses what the analysis cannot combine, with its reason and hint", () => {
    const decided = plan(
      analysis({
        tables: [{ name: "users" }],
        merge: {
          tier: "refused",
          sqlstate: "0A000",
          reason: "count(DISTINCT) ...",
          hint: "...",
          movesRowData: false,
        },
      }),
      context,
    );
    expect(decided).toMatchObject({
      kind: "refused",
      refusal: { code: "uncombinable", reason: "count(DISTINCT) ..." },
    });
  });

  it("refuses to ship rows of a strict-residency table out of their regions", () => {
    const decided = plan(
      analysis({
        tables: [{ name: "vault" }, { name: "orders" }],
        crossJoins: [{ left: 0, right: 1 }],
        merge: gatherOf([0, 1]),
      }),
      context,
    );
    expect(refusalOf(decided)).toBe("residency");
    expect(decided.kind === "refused" && decided.refusal.reason).toMatch(
      /vault.*ap-south, us-east to eu-west/,
    );
  });

  it("lets a strict-residency table's rows be concatenated but not finished at home", () => {
    const decided = plan(analysis({ tables: [{ name: "vault" }] }), context);
    expect(decided).toMatchObject({ kind: "scatter", homeFinishAllowed: false, merge: concat });
    expect(
      plan(analysis({ tables: [{ name: "vault", key: keys("alice") }], merge: gatherOf([0]) }), context),
    ).toMatchObject({
      kind: "single",
    });
  });

  it("splits an INSERT by the region of each row's key", () => {
    const decided = plan(
      analysis({
        kind: "insert",
        tables: [{ name: "users", access: "write" }],
        insert: { table: 0, rowKeys: [lit("alice"), lit("bob"), lit("dora")] },
      }),
      context,
    );
    expect(decided).toEqual({
      kind: "distributed-write",
      regions: ["eu-west", "us-east"],
      statements: [
        { region: "eu-west", sql: "INSERT rows 0,2", rows: [0, 2] },
        { region: "us-east", sql: "INSERT rows 1", rows: [1] },
      ],
      commit: "two-phase",
    });
  });

  it("rebuilds a region's INSERT only when its text is first read", () => {
    let splits = 0;
    const built = analysis({
      kind: "insert",
      tables: [{ name: "users", access: "write" }],
      insert: { table: 0, rowKeys: [lit("alice"), lit("bob")] },
    });
    const counting = {
      ...built,
      insert: { ...built.insert!, split: (rows: readonly number[]) => `${++splits}:${rows}` },
    };
    const decided = plan(counting, context);
    expect(splits).toBe(0);
    expect(
      decided.kind === "distributed-write" && decided.statements.map((statement) => statement.sql),
    ).toEqual(["1:0", "2:1"]);
    expect(decided.kind === "distributed-write" && decided.statements[0]!.sql).toBe("1:0");
    expect(splits).toBe(2);
  });

  it("sends an INSERT whose rows share a region there whole", () => {
    const decided = plan(
      analysis({
        kind: "insert",
        tables: [{ name: "users", access: "write" }],
        insert: { table: 0, rowKeys: [lit("bob"), param(1)] },
      }),
      { ...context, params: ["bob"] },
    );
    expect(decided).toMatchObject({ kind: "single", region: "us-east", access: "read-write" });
  });

  it("refuses an INSERT row whose key it cannot read, unless a key hint places it", () => {
    const spec = {
      kind: "insert" as const,
      tables: [{ name: "users", access: "write" as const }],
      insert: { table: 0, rowKeys: [undefined] },
    };
    expect(refusalOf(plan(analysis(spec), context))).toBe("unplaceable-insert-row");
    expect(plan(analysis({ ...spec, hints: { key: "chandra" } }), context)).toMatchObject({
      region: "ap-south",
    });
  });

  it("refuses INSERT ... SELECT into a geo-partitioned table unless the key is copied from a linked source", () => {
    const base = {
      kind: "insert" as const,
      tables: [{ name: "orders", access: "write" as const }, { name: "users" }],
    };
    expect(refusalOf(plan(analysis(base), context))).toBe("unsplittable-insert");
    const copied = plan(analysis({ ...base, links: [{ left: 0, right: 1, via: "insert-select" }] }), context);
    expect(copied.kind).toBe("distributed-write");
  });

  it("refuses a MERGE that may insert rows of several regions, and runs one that only updates everywhere", () => {
    const spec = {
      kind: "merge" as const,
      tables: [{ name: "users", access: "write" as const }, { name: "orders" }],
      links: [{ left: 0, right: 1, via: "merge" as const }],
    };
    expect(refusalOf(plan(analysis({ ...spec, mergeActions: ["update", "insert"] }), context))).toBe(
      "unsplittable-insert",
    );
    expect(plan(analysis({ ...spec, mergeActions: ["update"] }), context).kind).toBe("distributed-write");
  });

  it("refuses a write over several regions that also writes a table kept in one region", () => {
    const decided = plan(
      analysis({
        kind: "update",
        tables: [
          { name: "users", access: "write" },
          { name: "eu_audit", access: "write", block: 1 },
        ],
        blocks: [{ role: "top" }, { parent: 0, role: "cte" }],
      }),
      context,
    );
    expect(refusalOf(decided)).toBe("single-copy-write-across-regions");
  });

  it("writes every region verbatim for an unconstrained UPDATE", () => {
    const decided = plan(analysis({ kind: "update", tables: [{ name: "users", access: "write" }] }), context);
    expect(decided).toMatchObject({ kind: "distributed-write", statements: [{ sql: "<update>" }, {}, {}] });
  });

  it("refuses an UPDATE that assigns the key column", () => {
    expect(
      refusalOf(
        plan(
          analysis({
            kind: "update",
            tables: [{ name: "users", access: "write", key: keys("bob") }],
            assignsKey: true,
          }),
          context,
        ),
      ),
    ).toBe("key-update");
  });

  it("refuses a write that reads rows from regions it does not write", () => {
    const decided = plan(
      analysis({
        kind: "delete",
        tables: [{ name: "orders", access: "write", key: keys("bob") }, { name: "users" }],
      }),
      context,
    );
    expect(refusalOf(decided)).toBe("write-reads-elsewhere");
  });

  it("obeys a region hint, and refuses one naming no region", () => {
    expect(
      plan(
        analysis({ kind: "utility", tables: [{ name: "users" }], hints: { region: "ap-south" } }),
        context,
      ),
    ).toMatchObject({
      kind: "single",
      region: "ap-south",
    });
    const unknown = plan(analysis({ tables: [], hints: { region: "mars" } }), context);
    expect(unknown.kind === "refused" && unknown.refusal.sqlstate).toBe("22023");
  });

  it("routes as the key hint says for every geo-partitioned table", () => {
    expect(
      plan(analysis({ tables: [{ name: "users" }, { name: "orders" }], hints: { key: "bob" } }), context),
    ).toMatchObject({
      kind: "single",
      region: "us-east",
    });
  });

  it("leaves transaction control and session settings to the session", () => {
    expect(plan(analysis({ kind: "transaction" }), context)).toEqual({ kind: "local", what: "transaction" });
    expect(plan(analysis({ kind: "session" }), context)).toEqual({ kind: "local", what: "session" });
  });

  it("runs DDL that names no table in every region in one commit, except server-wide and temporary objects", () => {
    const everywhere = plan(
      analysis({
        kind: "ddl",
        command: "CREATE FUNCTION",
        text: "CREATE FUNCTION f() RETURNS int AS 'SELECT 1' LANGUAGE sql",
      }),
      context,
    );
    expect(everywhere).toMatchObject({
      kind: "distributed-write",
      regions: ["ap-south", "eu-west", "us-east"],
      commit: "two-phase",
    });
    for (const [command, text] of [
      ["CREATE ROLE", "CREATE ROLE r"],
      ["CREATEDB", "CREATE DATABASE d"],
      ["CREATE SEQ", "CREATE TEMP SEQUENCE s"],
      ["VIEW", "CREATE TEMPORARY VIEW v AS SELECT 1"],
    ] as const) {
      expect(plan(analysis({ kind: "ddl", command, text }), context), text).toMatchObject({
        kind: "single",
        region: "eu-west",
      });
    }
  });

  it("refuses a utility command on rows across regions and runs DDL in every region in one commit", () => {
    expect(
      refusalOf(
        plan(analysis({ kind: "utility", command: "LOCK TABLE", tables: [{ name: "users" }] }), context),
      ),
    ).toBe("utility-across-regions");
    expect(
      refusalOf(
        plan(analysis({ kind: "utility", command: "DECLARE CURSOR", tables: [{ name: "users" }] }), context),
      ),
    ).toBe("cursor-across-regions");
    expect(
      plan(analysis({ kind: "ddl", tables: [{ name: "users", access: "write" }] }), context),
    ).toMatchObject({
      kind: "distributed-write",
      regions: ["ap-south", "eu-west", "us-east"],
    });
  });
});

describe("ids from sequences", () => {
  const striped = Topology.fromConfig(
    parseConfig(
      `${TOPOLOGY_TOML}\n[[tables]]\ntable = "tickets"\nplacement = "geo_partitioned"\nkey = "tenant_id"\nids = "striped"\n`,
    ),
  );
  const ddl = (
    table: string,
    kind: "serial" | "identity" | "nextval",
    text = `ALTER TABLE ${table} ADD COLUMN n serial`,
  ) =>
    analysis({
      kind: "ddl",
      text,
      tables: [{ name: table, access: "write" }],
      idColumns: [{ schema: undefined, table, column: "n", kind }],
    });

  it("refuses DDL giving a geo-partitioned table's column ids from a sequence, naming the column and the fix", () => {
    for (const kind of ["serial", "identity", "nextval"] as const) {
      const decided = plan(ddl("orders", kind), context);
      expect(refusalOf(decided), kind).toBe("sequence-ids-across-regions");
      if (decided.kind === "refused") {
        expect(decided.refusal.reason).toContain("orders.n");
        expect(decided.refusal.hint).toContain('ids = "striped"');
      }
    }
  });

  it("runs it on replicated and pinned tables, which take ids from one sequence", () => {
    expect(plan(ddl("currencies", "serial"), context).kind).toBe("distributed-write");
    expect(plan(ddl("eu_audit", "identity"), context).kind).toBe("single");
  });

  it("gives each region of a striped table its own stripe, by its place in the configuration", () => {
    const decided = plan(ddl("tickets", "serial"), { topology: striped, directory });
    expect(decided.kind).toBe("distributed-write");
    if (decided.kind !== "distributed-write") return;
    const stripe = (region: string) => decided.statements.find((s) => s.region === region)?.sql ?? "";
    expect(stripe("eu-west")).toMatch(/^ALTER TABLE tickets ADD COLUMN n serial; DO \$geo_ids\$/);
    expect(stripe("eu-west")).toContain(`pg_get_serial_sequence('"tickets"', 'n'), 3, 1, 1)`);
    expect(stripe("us-east")).toContain("'n'), 3, 2, 2)");
    expect(stripe("ap-south")).toContain("'n'), 3, 3, 3)");
    // A nextval default names a sequence that may be shared: refused even when striped.
    expect(refusalOf(plan(ddl("tickets", "nextval"), { topology: striped, directory }))).toBe(
      "sequence-ids-across-regions",
    );
  });
});

describe("DDL on configured tables", () => {
  const change = (
    table: string,
    kind: "rename" | "set-schema" | "rename-column" | "drop-column" | "retype-column",
    column?: string,
  ) =>
    analysis({
      kind: "ddl",
      text: "ALTER TABLE ...",
      tableChanges: [{ schema: undefined, table, kind, ...(column === undefined ? {} : { column }) }],
    });

  it("refuses renaming or moving a configured table, and touching a geo-partitioned table's key column", () => {
    for (const [decided, why] of [
      [plan(change("orders", "rename"), context), "(renamed)"],
      [plan(change("currencies", "set-schema"), context), "(moved to another schema)"],
      [plan(change("orders", "rename-column", "tenant_id"), context), "(key column tenant_id renamed)"],
      [plan(change("users", "drop-column", "tenant_id"), context), "(key column tenant_id dropped)"],
      [plan(change("orders", "retype-column", "tenant_id"), context), "(key column tenant_id retyped)"],
    ] as const) {
      expect(refusalOf(decided)).toBe("configured-table-change");
      if (decided.kind === "refused") expect(decided.refusal.reason).toContain(why);
    }
  });

  it("allows other columns, and tables the configuration does not name", () => {
    expect(refusalOf(plan(change("orders", "rename-column", "status"), context))).toBeUndefined();
    expect(refusalOf(plan(change("scratch", "rename"), context))).toBeUndefined();
  });
});

describe("placement property", () => {
  type Predicate =
    | { op: "eq"; key: string }
    | { op: "in"; keys: string[] }
    | { op: "and" | "or"; left: Predicate; right: Predicate }
    | { op: "opaque"; keys: string[] };

  const keySpace = ["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "", "日本"];
  const keyArb = fc.constantFrom(...keySpace);
  const predicateArb: fc.Arbitrary<Predicate> = fc.letrec<{ p: Predicate }>((tie) => ({
    p: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.record({ op: fc.constant("eq" as const), key: keyArb }),
      fc.record({ op: fc.constant("in" as const), keys: fc.array(keyArb, { maxLength: 4 }) }),
      fc.record({ op: fc.constant("opaque" as const), keys: fc.array(keyArb, { maxLength: 4 }) }),
      fc.record({ op: fc.constantFrom("and" as const, "or" as const), left: tie("p"), right: tie("p") }),
    ),
  })).p;

  function matches(predicate: Predicate, key: string): boolean {
    switch (predicate.op) {
      case "eq":
        return key === predicate.key;
      case "in":
        return predicate.keys.includes(key);
      case "opaque":
        return !predicate.keys.includes(key);
      case "and":
        return matches(predicate.left, key) && matches(predicate.right, key);
      case "or":
        return matches(predicate.left, key) || matches(predicate.right, key);
    }
  }

  /** The analyser's lattice, as specified: AND intersects, OR unions, anything else is top. */
  function lattice(predicate: Predicate): string[] | undefined {
    switch (predicate.op) {
      case "eq":
        return [predicate.key];
      case "in":
        return predicate.keys;
      case "opaque":
        return undefined;
      case "and": {
        const left = lattice(predicate.left);
        const right = lattice(predicate.right);
        if (left === undefined) return right;
        if (right === undefined) return left;
        return left.filter((key) => right.includes(key));
      }
      case "or": {
        const left = lattice(predicate.left);
        const right = lattice(predicate.right);
        if (left === undefined || right === undefined) return undefined;
        return [...left, ...right];
      }
    }
  }

  const sharded = Topology.fromConfig(
    parseConfig(`${TOPOLOGY_TOML}
[[topology.regions]]
id = "eu-west-2"
location = "eu-west"
primary = { host = "eu2" }
`),
  );

  it("always includes every region that holds a matching row, whatever the directory and predicate", () => {
    fc.assert(
      fc.property(
        fc.dictionary(keyArb, fc.constantFrom(...sharded.regionIds), { maxKeys: 6 }),
        predicateArb,
        fc.array(keyArb, { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        (entries, predicate, rowKeys, asParams, linkedJoin) => {
          const directory = new MemoryDirectory(Object.entries(entries));
          const constraint = lattice(predicate);
          const params: string[] = [];
          const values =
            constraint?.map((key) => {
              if (!asParams) return lit(key);
              params.push(key);
              return param(params.length);
            }) ?? [];
          const key = constraint === undefined ? any : { kind: "values" as const, values };
          const tables = linkedJoin
            ? [
                { name: "users", key },
                { name: "orders", key: any },
              ]
            : [{ name: "users", key }];
          const decided = plan(
            analysis({ tables, links: linkedJoin ? [{ left: 0, right: 1, via: "join" }] : [] }),
            { topology: sharded, directory, params },
          );
          const candidates = regionsOf(decided);
          for (const rowKey of rowKeys) {
            if (!matches(predicate, rowKey)) continue;
            const holder = placeKey(rowKey, "text", sharded, directory);
            expect(candidates).toContain(holder);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it("places unlisted keys on the home location's shards only", () => {
    fc.assert(
      fc.property(fc.string(), (key) => {
        expect(["eu-west", "eu-west-2"]).toContain(shardFor(key, "text", sharded.homeShards));
      }),
      { numRuns: 200 },
    );
  });
});

describe("integer keys", () => {
  const integerTopology = Topology.fromConfig(
    parseConfig(`${TOPOLOGY_TOML}\n[routing]\nkey_type = "integer"\n`),
  );
  const integerDirectory = parseDirectoryTsv(
    "007\tus-east\n-12\tap-south\n",
    integerTopology,
    "keys.tsv",
    "integer",
  );

  it("match the directory whatever their spelling, as PostgreSQL compares them", () => {
    const read = (values: KeyValue[]) =>
      plan(analysis({ tables: [{ name: "users", key: { kind: "values", values } }] }), {
        topology: integerTopology,
        directory: integerDirectory,
      });
    expect(read([{ kind: "literal", type: "integer", text: "7" }])).toMatchObject({ region: "us-east" });
    expect(read([{ kind: "literal", type: "string", text: "+0007" }])).toMatchObject({ region: "us-east" });
    expect(read([{ kind: "literal", type: "integer", text: "-12" }])).toMatchObject({ region: "ap-south" });
    expect(read([{ kind: "literal", type: "numeric", text: "7.5" }]).kind).toBe("scatter");
  });
});

describe("replicated rows beside rows of several regions", () => {
  it("gathers or refuses a replicated table filtered by geo-partitioned rows from every region", () => {
    const spec = {
      tables: [
        { name: "currencies", block: 0 },
        { name: "orders", block: 1 },
      ],
      blocks: [{ role: "top" as const }, { parent: 0, role: "sublink" as const }],
    };
    const decided = plan(analysis(spec), { topology, directory });
    expect(decided.kind === "refused" && decided.refusal.code).toBe("cross-region-join");
    expect(plan(analysis({ ...spec, gather: gatherOf([1]) }), { topology, directory }).kind).toBe("scatter");
  });

  it("reads a replicated table joined under geo-partitioned rows in each region", () => {
    const decided = plan(
      analysis({
        tables: [
          { name: "orders", block: 0 },
          { name: "currencies", block: 1 },
        ],
        blocks: [{ role: "top" }, { parent: 0, role: "sublink" }],
      }),
      { topology, directory },
    );
    expect(decided.kind).toBe("scatter");
  });
});
