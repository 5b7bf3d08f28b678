import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Prng } from "../prng.js";
import { lit, type OracleRegion } from "../schema.js";

/**
 * The grammar generator's world: the example schema (examples/schema.sql: users and orders
 * partitioned by tenant_id, currencies and fx_rates replicated, eu_audit pinned to eu-west) plus
 * what the oracle adds of its own: a partitioned table `badges` holding values of the types a
 * finish must carry exactly (bit(4), "char", text[], real, a composite), and a nondeterministic
 * ICU collation `ci`. The data is fixed (a constant seed), so every run holds the same rows.
 */
export const GRAMMAR_HOME: OracleRegion = "eu-west";
export const GRAMMAR_AUDIT_REGION: OracleRegion = "eu-west";
export const GRAMMAR_FX_WRITER: OracleRegion = "us-east";

/** Tenants and their regions; mixed case, a quote and a space keep collation and quoting honest. */
export const GRAMMAR_TENANTS: readonly { readonly key: string; readonly region: OracleRegion }[] = [
  { key: "alice", region: "eu-west" },
  { key: "Bob", region: "eu-west" },
  { key: "carol", region: "eu-west" },
  { key: "de vries", region: "eu-west" },
  { key: "emma", region: "us-east" },
  { key: "Frank", region: "us-east" },
  { key: "gita", region: "us-east" },
  { key: "o'neil", region: "us-east" },
  { key: "ivan", region: "ap-south" },
  { key: "jia", region: "ap-south" },
  { key: "Kofi", region: "ap-south" },
  { key: "lea", region: "ap-south" },
];
/** Keys no region holds: routed home, they find nothing. */
export const GRAMMAR_UNKNOWN = ["zed", "ALICE"] as const;

export const CURRENCY_CODES = ["EUR", "USD", "INR", "JPY", "GBP", "CHF"] as const;
export const ORDER_STATUSES = ["open", "paid", "shipped", "void"] as const;
export const COUNTRY_CODES = ["DE", "fr", "IN", "jp", "US"] as const;
export const USER_NAMES = ["ann", "Ben", "chloé", "Dev", "eli", "Fay", "gil", "Åsa", "bob", "ANN"] as const;
export const AUDIT_ACTIONS = ["login", "export", "Refund", "delete"] as const;
export const BADGE_TAGS = ["red", "Blue", "green", "x y"] as const;

const here = fileURLToPath(new URL(".", import.meta.url));
const exampleSchemaPath = `${here}../../../../examples/schema.sql`;

const ORACLE_EXTRAS = `
CREATE TYPE price_t AS (amount numeric(8,2), cur text);
CREATE TABLE badges (
  tenant_id text    NOT NULL,
  id        bigint  NOT NULL,
  bits      bit(4)  NOT NULL,
  grade     "char",
  tags      text[],
  weight    real,
  price     price_t,
  PRIMARY KEY (tenant_id, id)
);
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
`;

/** The schema every server of the grammar world is created with. */
export function grammarSchemaSql(): string {
  return `${readFileSync(exampleSchemaPath, "utf8")}\n${ORACLE_EXTRAS}`;
}

export const GRAMMAR_TABLES_TOML = `
[[tables]]
table = "users"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "orders"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "badges"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "currencies"
placement = "global_replicated"

[[tables]]
table = "fx_rates"
placement = "global_replicated"
writer = "${GRAMMAR_FX_WRITER}"

[[tables]]
table = "eu_audit"
placement = "pinned"
region = "${GRAMMAR_AUDIT_REGION}"
`;

type Placement = "partitioned" | "replicated" | "pinned";
interface Table {
  readonly name: string;
  readonly columns?: string;
  readonly placement: Placement;
  readonly rows: { readonly tenant?: string; readonly values: readonly string[] }[];
  readonly overriding?: boolean;
}

const DATA_SEED = 20_250_614;

function ts(rng: Prng): string {
  return lit(
    `2025-${String(rng.int(1, 12)).padStart(2, "0")}-${String(rng.int(1, 28)).padStart(2, "0")} ${String(rng.int(0, 23)).padStart(2, "0")}:${String(rng.int(0, 59)).padStart(2, "0")}:00+00`,
  );
}

function grammarTables(): Table[] {
  const rng = new Prng(DATA_SEED);
  const users: Table["rows"] = [];
  const orders: Table["rows"] = [];
  const badges: Table["rows"] = [];
  for (const { key } of GRAMMAR_TENANTS) {
    const userCount = rng.int(2, 6);
    for (let id = 1; id <= userCount; id++) {
      users.push({
        tenant: key,
        values: [
          lit(key),
          String(id),
          lit(rng.pick(USER_NAMES)),
          rng.chance(0.15) ? "NULL" : lit(rng.pick(COUNTRY_CODES)),
          rng.chance(0.15) ? "NULL" : String(rng.int(18, 70)),
          rng.chance(0.2) ? "NULL" : ts(rng),
          rng.chance(0.7) ? "true" : "false",
          ts(rng),
        ],
      });
    }
    const orderCount = rng.int(1, 7);
    for (let id = 1; id <= orderCount; id++) {
      orders.push({
        tenant: key,
        values: [
          lit(key),
          String(id),
          String(rng.int(1, userCount)),
          rng.chance(0.3) ? "NULL" : String(rng.int(1, 6)),
          lit(rng.pick(CURRENCY_CODES.slice(0, 5))),
          `${rng.int(0, 500)}.${String(rng.int(0, 99)).padStart(2, "0")}`,
          lit(rng.pick(ORDER_STATUSES)),
          ts(rng),
        ],
      });
    }
    const badgeCount = rng.int(0, 3);
    for (let id = 1; id <= badgeCount; id++) {
      const bits = Array.from({ length: 4 }, () => (rng.chance(0.5) ? "1" : "0")).join("");
      const tags = rng.chance(0.2)
        ? "NULL"
        : `ARRAY[${rng
            .pickDistinct(BADGE_TAGS, rng.int(0, 2))
            .map((tag) => lit(tag))
            .join(", ")}]::text[]`;
      badges.push({
        tenant: key,
        values: [
          lit(key),
          String(id),
          `B'${bits}'`,
          rng.chance(0.15) ? "NULL" : `${lit(rng.pick(["a", "b", "Z", "z"]))}::"char"`,
          tags,
          rng.chance(0.15) ? "NULL" : String(rng.int(0, 400) / 10),
          rng.chance(0.2)
            ? "NULL"
            : `ROW(${rng.int(0, 99)}.${rng.int(0, 9)}, ${lit(rng.pick(CURRENCY_CODES))})::price_t`,
        ],
      });
    }
  }
  const currencyNames: Record<string, [string, number]> = {
    EUR: ["euro", 2],
    USD: ["US dollar", 2],
    INR: ["rupee", 2],
    JPY: ["yen", 0],
    GBP: ["Pound", 2],
    CHF: ["franc", 2],
  };
  const currencies = CURRENCY_CODES.map((code) => ({
    values: [lit(code), lit(currencyNames[code]![0]), String(currencyNames[code]![1])],
  }));
  const fx: Table["rows"] = [];
  for (const base of ["EUR", "USD"]) {
    for (const quote of CURRENCY_CODES) {
      if (base === quote || rng.chance(0.3)) continue;
      fx.push({ values: [lit(base), lit(quote), `${rng.int(0, 150)}.${rng.int(10000, 99999)}`, ts(rng)] });
    }
  }
  const audit: Table["rows"] = [];
  for (let id = 1; id <= 16; id++) {
    const tenant = rng.chance(0.1) ? GRAMMAR_UNKNOWN[0] : rng.pick(GRAMMAR_TENANTS).key;
    audit.push({ values: [String(id), lit(tenant), lit(rng.pick(AUDIT_ACTIONS)), ts(rng)] });
  }
  return [
    {
      name: "users",
      columns: "(tenant_id, id, name, country, age, last_seen, active, created_at)",
      placement: "partitioned",
      rows: users,
    },
    {
      name: "orders",
      columns: "(tenant_id, id, user_id, buyer, currency, total, status, created_at)",
      placement: "partitioned",
      rows: orders,
    },
    { name: "badges", placement: "partitioned", rows: badges },
    { name: "currencies", placement: "replicated", rows: currencies },
    { name: "fx_rates", placement: "replicated", rows: fx },
    {
      name: "eu_audit",
      columns: "(id, tenant_id, action, at)",
      placement: "pinned",
      rows: audit,
      overriding: true,
    },
  ];
}

const regionOf = new Map(GRAMMAR_TENANTS.map((tenant) => [tenant.key, tenant.region]));

/**
 * INSERTs loading what one region holds, or (`"reference"`) every row; `reversed` loads the rows in
 * the opposite physical order (the control database, which shows the generator's answers do not
 * depend on it).
 */
export function grammarDataSql(region: OracleRegion | "reference", reversed = false): string {
  return grammarTables()
    .map((table) => {
      const kept = table.rows.filter((row) => {
        if (region === "reference" || table.placement === "replicated") return true;
        if (table.placement === "pinned") return region === GRAMMAR_AUDIT_REGION;
        return regionOf.get(row.tenant ?? "") === region;
      });
      const rows = reversed ? kept.reverse() : kept;
      if (rows.length === 0) return "";
      const override = table.overriding ? " OVERRIDING SYSTEM VALUE" : "";
      // Rows given their ids leave the identity where it was: set it past them, or a generated
      // INSERT collides with them as soon as a refused statement has made the reference's and the
      // region's sequences drift apart (nextval is not rolled back).
      const past = table.overriding
        ? `SELECT setval(pg_get_serial_sequence('${table.name}', 'id'), (SELECT max(id) FROM ${table.name}));\n`
        : "";
      return `INSERT INTO ${table.name} ${table.columns ?? ""}${override} VALUES\n${rows.map((row) => `  (${row.values.join(", ")})`).join(",\n")};\n${past}`;
    })
    .join("");
}

/** The integer-keyed world: its own database on every server, behind a second proxy. */
export const INT_DATABASE = "intkeys";
/** Databases on the reference server holding every row in reversed order (the control run). */
export const CONTROL_DATABASE = "control";
export const INT_CONTROL_DATABASE = "intkeys_control";

export const INT_KEY_REGIONS: readonly { readonly key: number; readonly region: OracleRegion }[] = [
  { key: 1, region: "eu-west" },
  { key: 2, region: "eu-west" },
  { key: 3, region: "eu-west" },
  { key: 4, region: "us-east" },
  { key: 5, region: "us-east" },
  { key: 6, region: "us-east" },
  { key: 7, region: "ap-south" },
  { key: 8, region: "ap-south" },
  { key: 9, region: "ap-south" },
];

export const INT_SCHEMA_SQL = `
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE accounts (acct integer NOT NULL, id integer NOT NULL, owner text, balance numeric(10,2) NOT NULL, PRIMARY KEY (acct, id));
CREATE TABLE moves (acct integer NOT NULL, id integer NOT NULL, amount numeric(10,2) NOT NULL, kind text NOT NULL, PRIMARY KEY (acct, id));
`;

export const INT_TABLES_TOML = `
[[tables]]
table = "accounts"
placement = "geo_partitioned"
key = "acct"

[[tables]]
table = "moves"
placement = "geo_partitioned"
key = "acct"

[routing]
key_type = "integer"
`;

/** INSERTs for the integer-keyed world: what one region holds, or every row. */
export function intDataSql(region: OracleRegion | "reference", reversed = false): string {
  const rng = new Prng(DATA_SEED + 1);
  const accounts: string[] = [];
  const moves: string[] = [];
  for (const { key, region: home } of INT_KEY_REGIONS) {
    const mine = region === "reference" || region === home;
    const accountCount = rng.int(1, 3);
    const moveCount = rng.int(0, 4);
    for (let id = 1; id <= accountCount; id++) {
      const row = `(${key}, ${id}, ${rng.chance(0.15) ? "NULL" : lit(rng.pick(USER_NAMES))}, ${rng.int(0, 900)}.${rng.int(10, 99)})`;
      if (mine) accounts.push(row);
    }
    for (let id = 1; id <= moveCount; id++) {
      const row = `(${key}, ${id}, ${rng.int(1, 300)}.${rng.int(10, 99)}, ${lit(rng.pick(["in", "out", "Fee"]))})`;
      if (mine) moves.push(row);
    }
  }
  if (reversed) {
    accounts.reverse();
    moves.reverse();
  }
  return [
    accounts.length > 0 ? `INSERT INTO accounts VALUES ${accounts.join(", ")};` : "",
    moves.length > 0 ? `INSERT INTO moves VALUES ${moves.join(", ")};` : "",
  ].join("\n");
}
