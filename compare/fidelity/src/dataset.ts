/**
 * The fidelity dataset: three regions, twelve tenants, two geo-partitioned tables keyed by
 * `tenant_id`, a replicated and a pinned table. Every value comes from a constant seed, so the
 * expected answer of a statement depends on the statement alone.
 */
export const REGIONS = ["eu-west", "us-east", "ap-south"] as const;
export type Region = (typeof REGIONS)[number];
export const HOME_REGION: Region = "eu-west";
export const PINNED_REGION: Region = "us-east";

export const TENANTS: readonly { readonly key: string; readonly region: Region }[] = [
  { key: "acme", region: "eu-west" },
  { key: "bäcker", region: "eu-west" },
  { key: "o'neil", region: "eu-west" },
  { key: "zoë", region: "eu-west" },
  { key: "delta", region: "us-east" },
  { key: "echo", region: "us-east" },
  { key: "Foxtrot", region: "us-east" },
  { key: "golf", region: "us-east" },
  { key: "東京", region: "ap-south" },
  { key: "india", region: "ap-south" },
  { key: "juliet", region: "ap-south" },
  { key: "kilo", region: "ap-south" },
];

export const SCHEMA_SQL = `
CREATE TABLE accounts (
  tenant_id text             NOT NULL,
  id        integer          NOT NULL,
  uid       uuid             NOT NULL,
  name      text             NOT NULL,
  city      text,
  plan      text             NOT NULL,
  score     double precision,
  balance   numeric(14,2)    NOT NULL,
  ratio     numeric,
  active    boolean,
  opened    timestamp,
  PRIMARY KEY (tenant_id, id)
);
CREATE TABLE events (
  tenant_id  text             NOT NULL,
  id         integer          NOT NULL,
  account_id integer          NOT NULL,
  kind       text             NOT NULL,
  qty        integer,
  amount     numeric(12,3)    NOT NULL,
  weight     double precision NOT NULL,
  at         timestamp        NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE TABLE plans (
  code  text PRIMARY KEY,
  label text NOT NULL,
  price numeric(10,2) NOT NULL
);
CREATE TABLE notes (
  id        integer PRIMARY KEY,
  tenant_id text    NOT NULL,
  body      text    NOT NULL,
  stars     integer
);
CREATE TABLE ticks (
  tenant_id text    NOT NULL,
  n         integer NOT NULL,
  payload   text    NOT NULL,
  PRIMARY KEY (tenant_id, n)
);
`;

export const TABLES_TOML = `
[[tables]]
table = "accounts"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "events"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "ticks"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "plans"
placement = "global_replicated"

[[tables]]
table = "notes"
placement = "pinned"
region = "${PINNED_REGION}"
`;

/** mulberry32: a tiny PRNG whose sequence is the same on every machine. */
export class Prng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [low, high]. */
  int(low: number, high: number): number {
    return low + Math.floor(this.next() * (high - low + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(values: readonly T[]): T {
    return values[Math.floor(this.next() * values.length)]!;
  }
}

export function lit(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

const CITIES = [
  "Berlin",
  "Zürich",
  "Ålesund",
  "São Paulo",
  "München",
  "Łódź",
  "Köln",
  "Ōsaka",
  "apple",
  "Zebra",
];
const NAMES = [
  "Ana",
  "ana",
  "Émile",
  "Bjørn",
  "Chloé",
  "Dmitrij",
  "Eva",
  "Øystein",
  "Ünal",
  "李",
  "Zoe",
  "zoe",
];
const PLANS = ["free", "pro", "team", "enterprise"] as const;
const KINDS = ["click", "view", "buy", "refund", "Buy", "ümlaut"] as const;

const SEED = 20_261_130;

function uuid(rng: Prng): string {
  const hex = (n: number) => Array.from({ length: n }, () => rng.int(0, 15).toString(16)).join("");
  return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
}

function timestamp(rng: Prng): string {
  // Few distinct values, so equal sort keys are common.
  const day = String(rng.int(1, 28)).padStart(2, "0");
  const hour = String(rng.int(0, 3) * 6).padStart(2, "0");
  return `2026-${String(rng.int(1, 3)).padStart(2, "0")}-${day} ${hour}:00:00`;
}

/** numeric with varying scale, negatives and zero: "3", "-0.5", "12.125", "7.0000". */
function varyingNumeric(rng: Prng): string {
  const whole = rng.int(-50, 50);
  const scale = rng.int(0, 4);
  if (scale === 0) return String(whole);
  const fraction = String(rng.int(0, 10 ** scale - 1)).padStart(scale, "0");
  return `${whole}.${fraction}`;
}

interface TableRows {
  readonly table: "accounts" | "events" | "plans" | "notes";
  readonly rows: readonly { readonly tenant?: string; readonly values: string }[];
}

/** Every row of the four small tables. */
export function datasetTables(): TableRows[] {
  const rng = new Prng(SEED);
  const accounts: { tenant: string; values: string }[] = [];
  const events: { tenant: string; values: string }[] = [];
  for (const { key } of TENANTS) {
    const accountCount = rng.int(60, 110);
    for (let id = 1; id <= accountCount; id++) {
      const values = [
        lit(key),
        String(id),
        lit(uuid(rng)),
        lit(`${rng.pick(NAMES)} ${rng.int(1, 9)}`),
        rng.chance(0.1) ? "NULL" : lit(rng.pick(CITIES)),
        lit(rng.pick(PLANS)),
        // Eighths are exact in binary, so float sums do not depend on the order of addition.
        rng.chance(0.08) ? "NULL" : String(rng.int(-400, 800) / 8),
        `${rng.int(-2000, 9000)}.${String(rng.int(0, 99)).padStart(2, "0")}`,
        rng.chance(0.1) ? "NULL" : varyingNumeric(rng),
        rng.chance(0.1) ? "NULL" : rng.chance(0.7) ? "true" : "false",
        rng.chance(0.12) ? "NULL" : lit(timestamp(rng)),
      ];
      accounts.push({ tenant: key, values: values.join(", ") });
    }
    const eventCount = rng.int(150, 230);
    for (let id = 1; id <= eventCount; id++) {
      const values = [
        lit(key),
        String(id),
        String(rng.int(1, accountCount)),
        lit(rng.pick(KINDS)),
        rng.chance(0.1) ? "NULL" : String(rng.int(-5, 20)),
        `${rng.int(-100, 900)}.${String(rng.int(0, 999)).padStart(3, "0")}`,
        String(rng.int(0, 4000) / 4),
        lit(timestamp(rng)),
      ];
      events.push({ tenant: key, values: values.join(", ") });
    }
  }
  const plans = PLANS.map((code, index) => ({
    values: [lit(code), lit(`Plan ${code.toUpperCase()} ✓`), `${index * 10 + 0.5}`].join(", "),
  }));
  const notes = Array.from({ length: 80 }, (_, index) => ({
    values: [
      String(index + 1),
      lit(rng.pick(TENANTS).key),
      lit(`${rng.pick(["note", "Nöte", "ßig", "zz"])} ${rng.int(1, 20)}`),
      rng.chance(0.15) ? "NULL" : String(rng.int(1, 5)),
    ].join(", "),
  }));
  return [
    { table: "accounts", rows: accounts },
    { table: "events", rows: events },
    { table: "plans", rows: plans },
    { table: "notes", rows: notes },
  ];
}

const regionOf = new Map(TENANTS.map((tenant) => [tenant.key, tenant.region]));

function held(table: TableRows["table"], tenant: string | undefined, where: Region | "reference"): boolean {
  if (where === "reference") return true;
  switch (table) {
    case "accounts":
    case "events":
      return regionOf.get(tenant ?? "") === where;
    case "plans":
      return true;
    case "notes":
      return where === PINNED_REGION;
  }
}

/** INSERTs loading what one region holds, or every row for the reference. */
export function dataSql(where: Region | "reference"): string {
  return `${datasetTables()
    .map(({ table, rows }) => {
      const kept = rows.filter((row) => held(table, row.tenant, where));
      return kept.length === 0
        ? ""
        : `INSERT INTO ${table} VALUES\n${kept.map((row) => `(${row.values})`).join(",\n")};\n`;
    })
    .join("")}ANALYZE;\n`;
}

/** Rows per region of the streaming table `ticks`, the big merge (loaded only in the regions). */
export const TICKS_PER_REGION = 40_000;

/** Region i holds n = i+1, i+4, i+7, ...: interleaved, so the merge alternates between regions. */
export function ticksSql(regionIndex: number): string {
  const tenant = TENANTS.find((t) => t.region === REGIONS[regionIndex])!.key;
  return `INSERT INTO ticks SELECT ${lit(tenant)}, g * 3 + ${regionIndex + 1}, repeat('x', 1600) FROM generate_series(0, ${TICKS_PER_REGION - 1}) g;\n`;
}

/** The directory as `key<TAB>region` lines. */
export function directoryTsv(): string {
  return `${TENANTS.map((tenant) => `${tenant.key}\t${tenant.region}`).join("\n")}\n`;
}
