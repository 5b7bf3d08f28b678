import pg from "pg";
import { REGIONS } from "./fake-regions.js";
import { type RealRegions, startRealRegions } from "./real-regions.js";
import { txnSection } from "./txn-data-dir.js";

/** Tables of the scatter suite beside the example schema: every type the merge compares. */
const SCHEMA = `
CREATE TABLE measures (
  tenant_id text NOT NULL,
  id        int4 NOT NULL,
  qty       int8,
  small     int2,
  price     numeric(10,3),
  score     float8,
  ratio     float4,
  tag       uuid,
  label     text,
  flag      bool,
  PRIMARY KEY (tenant_id, id)
);
CREATE TABLE vault (
  tenant_id text NOT NULL,
  id        int4 NOT NULL,
  secret    text NOT NULL,
  PRIMARY KEY (tenant_id, id)
);`;

export const SCATTER_TOML = `
[[tables]]
table = "measures"
placement = "geo_partitioned"
key = "tenant_id"

[[tables]]
table = "vault"
placement = "geo_partitioned"
key = "tenant_id"
residency = "strict"

[pool]
max = 3

[gather]
max_rows = 200
max_bytes = 1000000
`;

const FLOATS = ["1.5", "-2.25", "'NaN'", "'Infinity'", "'-Infinity'", "0", "NULL", "3.0e-7", "-0.0"];
const LABELS = ["apple", "Banana", "cherry", "apple pie", "Äpfel", "zebra", "_under", "10", "9"];

/** Rows of `measures` and `vault` for one key: NULLs, NaN, infinities, mixed numeric scales, ties. */
function measureRows(key: string, index: number): string {
  const rows: string[] = [];
  for (let id = 1; id <= 6; id++) {
    const n = index * 6 + id;
    const qty = n % 7 === 0 ? "NULL" : String(((n * 7919) % 2001) - 1000);
    const small = n % 5 === 0 ? "NULL" : String(((n * 37) % 300) - 150);
    const price = n % 9 === 0 ? "NULL" : ["12.5", "-3.125", "0", "1000000.001", "7", "0.010"][n % 6]!;
    const score = FLOATS[n % FLOATS.length]!;
    const ratio = FLOATS[(n + 4) % FLOATS.length]!;
    const tag =
      n % 8 === 0
        ? "NULL"
        : `'${(n * 2654435761).toString(16).padStart(8, "0").slice(-8)}-0000-4000-8000-${String(n).padStart(12, "0")}'`;
    const label = n % 11 === 0 ? "NULL" : `'${LABELS[n % LABELS.length]}'`;
    const flag = n % 4 === 0 ? "NULL" : n % 3 === 0 ? "false" : "true";
    rows.push(`('${key}', ${id}, ${qty}, ${small}, ${price}, ${score}, ${ratio}, ${tag}, ${label}, ${flag})`);
  }
  return `INSERT INTO measures VALUES ${rows.join(", ")};
INSERT INTO vault VALUES ('${key}', 1, 's-${key}-1'), ('${key}', 2, 's-${key}-2');`;
}

/**
 * The example regions (three PostgreSQL servers, rows split by the directory, a reference database
 * with every row) plus the scatter suite's own tables, placed through the proxy's configuration.
 */
export async function startScatterRegions(): Promise<RealRegions> {
  const regions = await startRealRegions(`${SCATTER_TOML}${txnSection()}`);
  let all = SCHEMA;
  const perRegion = new Map<string, string>(REGIONS.map((region) => [region, SCHEMA]));
  for (const [index, [key, region]] of regions.entries.entries()) {
    const rows = measureRows(key, index);
    all += `\n${rows}`;
    perRegion.set(region, `${perRegion.get(region)}\n${rows}`);
  }
  for (const region of REGIONS) await regions.direct[region].query(perRegion.get(region)!);
  await regions.reference.query(all);
  await Promise.all([regions.reference, ...Object.values(regions.direct)].map((c) => c.query("ANALYZE")));
  // A test stops a region's server: its direct client's lost connection is expected.
  for (const client of Object.values(regions.direct)) client.on("error", () => undefined);
  return regions;
}

/** A node-postgres client whose values all stay as the server's text. */
export async function textClient(port: number, database = "shop"): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user: "postgres",
    database,
    types: { getTypeParser: () => (value: string) => value },
  });
  await client.connect();
  return client;
}
