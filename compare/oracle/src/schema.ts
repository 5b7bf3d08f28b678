import { Prng } from "./prng.js";

/**
 * The oracle's world: three regions, tenants placed in them by a directory, and five tables
 * covering every placement. The data is fixed (its own constant seed), so a statement's expected
 * answer depends only on the statement.
 */
export const REGIONS = ["eu-west", "us-east", "ap-south"] as const;
export type OracleRegion = (typeof REGIONS)[number];
export const HOME_REGION: OracleRegion = "eu-west";

/** Tenants and the region each one lives in. Quotes and spaces keep literal quoting honest. */
export const TENANTS: readonly { readonly key: string; readonly region: OracleRegion }[] = [
  { key: "ada", region: "eu-west" },
  { key: "bela", region: "eu-west" },
  { key: "cyd", region: "eu-west" },
  { key: "mo li", region: "eu-west" },
  { key: "emil", region: "us-east" },
  { key: "fynn", region: "us-east" },
  { key: "gus", region: "us-east" },
  { key: "o'hara", region: "us-east" },
  { key: "ivo", region: "ap-south" },
  { key: "jun", region: "ap-south" },
  { key: "kai", region: "ap-south" },
  { key: "lena", region: "ap-south" },
];

/** A key in no region yet: statements about it route to the home region and find nothing. */
export const UNKNOWN_TENANT = "zed";

export const PINNED_AUDIT_REGION: OracleRegion = "eu-west";
export const PINNED_LEDGER_REGION: OracleRegion = "ap-south";
export const FX_WRITER_REGION: OracleRegion = "us-east";

export const COUNTRIES = ["DE", "FR", "IN", "JP", "US", "BR"] as const;
export const TIERS = ["gold", "silver", "bronze"] as const;
export const STATUSES = ["open", "paid", "shipped", "void"] as const;
export const CATEGORIES = ["book", "tool", "food"] as const;
export const PRODUCTS = ["P01", "P02", "P03", "P04", "P05", "P06", "P07", "P08"] as const;
export const ACTIONS = ["login", "export", "refund", "delete"] as const;

export const SCHEMA_SQL = `
CREATE TABLE customers (
  tenant_id text             NOT NULL,
  id        integer          NOT NULL,
  name      text             NOT NULL,
  country   text             NOT NULL,
  tier      text,
  age       integer,
  score     double precision NOT NULL,
  balance   numeric(12,2)    NOT NULL,
  active    boolean          NOT NULL,
  joined    date             NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE TABLE orders (
  tenant_id    text             NOT NULL,
  id           integer          NOT NULL,
  customer_id  integer          NOT NULL,
  product_code text             NOT NULL,
  qty          integer          NOT NULL,
  amount       numeric(12,2)    NOT NULL,
  status       text             NOT NULL,
  weight       double precision,
  PRIMARY KEY (tenant_id, id)
);
CREATE TABLE products (
  code     text          PRIMARY KEY,
  name     text          NOT NULL,
  category text          NOT NULL,
  price    numeric(10,2) NOT NULL
);
CREATE TABLE countries (
  code      text PRIMARY KEY,
  name      text NOT NULL,
  continent text NOT NULL
);
CREATE TABLE audit_events (
  id        integer PRIMARY KEY,
  tenant_id text    NOT NULL,
  action    text    NOT NULL,
  amount    integer NOT NULL
);
CREATE TABLE ledger (
  id        integer       PRIMARY KEY,
  tenant_id text          NOT NULL,
  delta     numeric(12,2) NOT NULL
);
`;

/** Placement lines for geoproxy's configuration (packages/core CONFIG.md). */
export const TABLES_TOML = `
[[tables]]
table = "customers"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "orders"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "products"
placement = "global_replicated"

[[tables]]
table = "countries"
placement = "global_replicated"
writer = "${FX_WRITER_REGION}"

[[tables]]
table = "audit_events"
placement = "pinned"
region = "${PINNED_AUDIT_REGION}"

[[tables]]
table = "ledger"
placement = "pinned"
region = "${PINNED_LEDGER_REGION}"
`;

/** A SQL string literal. */
export function lit(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

interface Row {
  readonly tenant?: string;
  readonly values: readonly string[];
}

interface TableData {
  readonly table: string;
  readonly placement: "partitioned" | "replicated" | { readonly pinned: OracleRegion };
  readonly rows: readonly Row[];
}

const DATA_SEED = 20_261_130;

function money(rng: Prng, low: number, high: number): string {
  return `${rng.int(low, high)}.${String(rng.int(0, 99)).padStart(2, "0")}`;
}

/** Every row of every table, generated once from a constant seed. */
export function datasetTables(): TableData[] {
  const rng = new Prng(DATA_SEED);
  const customers: Row[] = [];
  const orders: Row[] = [];
  for (const { key } of TENANTS) {
    const customerCount = rng.int(3, 8);
    for (let id = 1; id <= customerCount; id++) {
      const tier = rng.chance(0.15) ? "NULL" : lit(rng.pick(TIERS));
      const age = rng.chance(0.1) ? "NULL" : String(rng.int(18, 80));
      customers.push({
        tenant: key,
        values: [
          lit(key),
          String(id),
          lit(`${rng.pick(["Ana", "Ben", "Chi", "Dev", "Eli", "Fay", "Gil"])} ${id}`),
          lit(rng.pick(COUNTRIES)),
          tier,
          age,
          // Eighths are exact in binary; other float columns exercise rounding.
          String(rng.int(0, 800) / 8),
          money(rng, 0, 5000),
          rng.chance(0.75) ? "true" : "false",
          lit(`2025-${String(rng.int(1, 12)).padStart(2, "0")}-${String(rng.int(1, 28)).padStart(2, "0")}`),
        ],
      });
    }
    const orderCount = rng.int(4, 15);
    for (let id = 1; id <= orderCount; id++) {
      orders.push({
        tenant: key,
        values: [
          lit(key),
          String(id),
          String(rng.int(1, customerCount + 1)),
          lit(rng.pick(PRODUCTS)),
          String(rng.int(1, 9)),
          money(rng, 1, 900),
          lit(rng.pick(STATUSES)),
          rng.chance(0.1) ? "NULL" : String(rng.int(1, 5000) / 10),
        ],
      });
    }
  }
  const products: Row[] = PRODUCTS.map((code, index) => ({
    values: [
      lit(code),
      lit(`product ${index + 1}`),
      lit(CATEGORIES[index % CATEGORIES.length]!),
      money(rng, 1, 200),
    ],
  }));
  const continents: Record<(typeof COUNTRIES)[number], string> = {
    DE: "europe",
    FR: "europe",
    IN: "asia",
    JP: "asia",
    US: "america",
    BR: "america",
  };
  const countries: Row[] = COUNTRIES.map((code) => ({
    values: [lit(code), lit(`country ${code}`), lit(continents[code])],
  }));
  const audit: Row[] = [];
  for (let id = 1; id <= 30; id++) {
    audit.push({
      values: [String(id), lit(rng.pick(TENANTS).key), lit(rng.pick(ACTIONS)), String(rng.int(0, 500))],
    });
  }
  const ledger: Row[] = [];
  for (let id = 1; id <= 30; id++) {
    ledger.push({ values: [String(id), lit(rng.pick(TENANTS).key), money(rng, -300, 300)] });
  }
  return [
    { table: "customers", placement: "partitioned", rows: customers },
    { table: "orders", placement: "partitioned", rows: orders },
    { table: "products", placement: "replicated", rows: products },
    { table: "countries", placement: "replicated", rows: countries },
    { table: "audit_events", placement: { pinned: PINNED_AUDIT_REGION }, rows: audit },
    { table: "ledger", placement: { pinned: PINNED_LEDGER_REGION }, rows: ledger },
  ];
}

const regionOfTenant = new Map(TENANTS.map((tenant) => [tenant.key, tenant.region]));

function holds(table: TableData, row: Row, region: OracleRegion | "reference"): boolean {
  if (region === "reference") return true;
  if (table.placement === "replicated") return true;
  if (table.placement === "partitioned") return regionOfTenant.get(row.tenant ?? "") === region;
  return table.placement.pinned === region;
}

/** INSERTs loading what one region holds, or (`"reference"`) every row. */
export function dataSql(region: OracleRegion | "reference"): string {
  return datasetTables()
    .map((table) => {
      const rows = table.rows.filter((row) => holds(table, row, region));
      if (rows.length === 0) return "";
      return `INSERT INTO ${table.table} VALUES\n${rows.map((row) => `  (${row.values.join(", ")})`).join(",\n")};\n`;
    })
    .join("");
}

/** The directory as `key<TAB>region` lines. */
export function directoryTsv(): string {
  return `${TENANTS.map((tenant) => `${tenant.key}\t${tenant.region}`).join("\n")}\n`;
}
