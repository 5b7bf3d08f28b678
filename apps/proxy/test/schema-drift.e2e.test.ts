import type { ProxySnapshot, SchemaDriftStatus } from "@geo/admin";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseScrape } from "./admin-prometheus.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

// Each region's copies of the configured tables, compared with the home region's: SHOW SCHEMA
// lists every (table, region) and the schema_drift alert names each copy that differs; the admin
// port counts the drifted tables in /metrics and names them in /snapshot and on the dashboard.
let regions: RealRegions;
let client: pg.Client;
let adminUrl: string;

beforeAll(async () => {
  regions = await startRealRegions("\n[admin]\nport = 0\n");
  const admin = regions.proxy.runtime.observability.admin;
  if (admin === undefined) throw new Error("the [admin] section did not start the admin port");
  adminUrl = admin.url;
  client = new pg.Client({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
  });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await regions?.close();
});

const statusOf = async (): Promise<string[]> =>
  (await client.query("SHOW SCHEMA")).rows.map((row) => `${row.table} ${row.region} ${row.status}`);

/** The drifted tables as /metrics counts them: the scrape's text and its one sample. */
async function driftMetric(): Promise<{ text: string; value: number | undefined }> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  return { text, value: parseScrape(text).value("geoproxy_schema_drift_tables") };
}

async function driftSnapshot(): Promise<SchemaDriftStatus> {
  return ((await (await fetch(`${adminUrl}/snapshot`)).json()) as ProxySnapshot).schemaDrift;
}

/** The dashboard's count of drifted tables, as the page first arrives. */
async function driftOnDashboard(): Promise<string | undefined> {
  const html = await (await fetch(`${adminUrl}/`)).text();
  return /data-live="schema-drift-tables">(\d+)</.exec(html)?.[1];
}

describe("SHOW SCHEMA and the schema_drift alert", () => {
  it("finds every copy alike after start, and leaves pinned tables out", async () => {
    const result = await client.query("SHOW SCHEMA");
    expect(result.fields.map((field) => field.name)).toEqual([
      "table",
      "region",
      "status",
      "detail",
      "checked_at",
    ]);
    expect(await statusOf()).toEqual(
      ["public.currencies", "public.orders", "public.users"].flatMap((table) =>
        ["eu-west", "us-east", "ap-south"].map((region) => `${table} ${region} same`),
      ),
    );
    expect(result.rows.every((row) => row.checked_at !== null && row.detail === "")).toBe(true);
    const alerts = await client.query("SHOW ALERTS");
    expect(alerts.rows.filter((row) => row.name === "schema_drift")).toEqual([]);
    expect((await driftMetric()).value).toBe(0);
    const status = await driftSnapshot();
    expect(status).toMatchObject({ reference: "eu-west", tables: [] });
    expect(status.checkedAt).not.toBeNull();
    expect(await driftOnDashboard()).toBe("0");
  });

  it("names a column, a type and an index changed on one server, and clears once they are alike again", async () => {
    await regions.direct["us-east"].query("ALTER TABLE orders ADD COLUMN note text");
    await regions.direct["ap-south"].query(
      "ALTER TABLE users ALTER COLUMN age TYPE bigint; CREATE INDEX users_by_name ON users (name)",
    );
    await regions.direct["ap-south"].query("DROP TABLE currencies");
    try {
      await regions.proxy.runtime.schemaDrift.check(5_000);
      const rows = (await client.query("SHOW SCHEMA")).rows.filter((row) => row.status !== "same");
      expect(rows.map((row) => `${row.table} ${row.region} ${row.status}`)).toEqual([
        "public.currencies ap-south missing",
        "public.orders us-east differs",
        "public.users ap-south differs",
      ]);
      expect(rows[1].detail).toBe("extra column note text");
      expect(rows[2].detail).toBe(
        "column age bigint (age integer in eu-west); extra index: CREATE INDEX ON public.users USING btree (name)",
      );
      const alerts = (await client.query("SHOW ALERTS")).rows.filter((row) => row.name === "schema_drift");
      expect(alerts.map((row) => row.subject)).toEqual([
        "ap-south/public.currencies",
        "ap-south/public.users",
        "us-east/public.orders",
      ]);
      expect(alerts[2].message).toMatch(
        /public\.orders in us-east is not like its copy in eu-west: extra column note/,
      );
      expect((await driftMetric()).value).toBe(3);
      expect((await driftSnapshot()).tables).toEqual([
        {
          table: "public.currencies",
          regions: [
            { region: "ap-south", status: "missing", detail: "no table public.currencies in ap-south" },
          ],
        },
        {
          table: "public.orders",
          regions: [{ region: "us-east", status: "differs", detail: "extra column note text" }],
        },
        {
          table: "public.users",
          regions: [{ region: "ap-south", status: "differs", detail: rows[2].detail }],
        },
      ]);
      expect(await driftOnDashboard()).toBe("3");
    } finally {
      await regions.direct["us-east"].query("ALTER TABLE orders DROP COLUMN note");
      await regions.direct["ap-south"].query(
        "ALTER TABLE users ALTER COLUMN age TYPE integer; DROP INDEX users_by_name; CREATE TABLE currencies (code char(3) PRIMARY KEY, name text NOT NULL, digits integer NOT NULL DEFAULT 2)",
      );
    }
    await regions.proxy.runtime.schemaDrift.check(5_000);
    expect((await statusOf()).filter((line) => !line.endsWith(" same"))).toEqual([]);
    const alerts = await client.query("SHOW ALERTS");
    expect(alerts.rows.filter((row) => row.name === "schema_drift")).toEqual([]);
    expect((await driftMetric()).value).toBe(0);
    expect((await driftSnapshot()).tables).toEqual([]);
  });

  it("compares the regions again right after a DDL passes through the proxy, without waiting for the interval", async () => {
    // The interval is 60 s; each wait below ends as soon as SHOW SCHEMA shows the change, and
    // gives up after 20 s, which only a check started by the DDL can beat.
    const until = async (wanted: (lines: string[]) => boolean): Promise<string[]> => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const lines = (await statusOf()).filter((line) => !line.endsWith(" same"));
        if (wanted(lines) || Date.now() > deadline) return lines;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    await regions.direct["us-east"].query("ALTER TABLE orders ADD COLUMN note text");
    try {
      expect((await statusOf()).filter((line) => !line.endsWith(" same"))).toEqual([]);
      await client.query("CREATE FUNCTION drift_probe() RETURNS integer LANGUAGE sql AS 'SELECT 1'");
      expect(await until((lines) => lines.length > 0)).toEqual(["public.orders us-east differs"]);
      // The gauge and the snapshot read the same report SHOW SCHEMA just showed.
      expect((await driftMetric()).text).toMatch(/^geoproxy_schema_drift_tables 1$/m);
      expect((await driftSnapshot()).tables).toEqual([
        {
          table: "public.orders",
          regions: [{ region: "us-east", status: "differs", detail: "extra column note text" }],
        },
      ]);
      expect(await driftOnDashboard()).toBe("1");
    } finally {
      await regions.direct["us-east"].query("ALTER TABLE orders DROP COLUMN note");
    }
    await client.query("DROP FUNCTION drift_probe()");
    expect(await until((lines) => lines.length === 0)).toEqual([]);
    expect((await driftMetric()).text).toMatch(/^geoproxy_schema_drift_tables 0$/m);
    expect((await driftSnapshot()).tables).toEqual([]);
    expect(await driftOnDashboard()).toBe("0");
  });
});
