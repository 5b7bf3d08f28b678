import { MemoryDirectory, parseConfig } from "@geo/core";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { parseScrape } from "./admin-prometheus.js";
import { regionsToml } from "./support/fake-regions.js";

/**
 * Three PostgreSQL servers as regions (eu-west home, us-east, ap-south), each with a database
 * "shop" the proxy uses. eu-west's and us-east's order text by libc "C"; ap-south's is created
 * with ICU's root locale, which orders "apple" before "Banana" where "C" orders it after.
 */

const AP_SOUTH = 2;
const LIBC = "TEMPLATE template0 LOCALE 'C'";
const ICU = "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C'";
const TABLE =
  "CREATE TABLE items (tenant_id text NOT NULL, id int4 NOT NULL, label text, PRIMARY KEY (tenant_id, id))";
const ROWS: Record<number, string> = {
  0: "INSERT INTO items VALUES ('alice', 1, 'apple'), ('alice', 2, 'Banana')",
  1: "INSERT INTO items VALUES ('bob', 1, 'cherry'), ('bob', 2, 'Date')",
  2: "INSERT INTO items VALUES ('chandra', 1, 'apple'), ('chandra', 2, 'Banana'), ('chandra', 3, 'cherry'), ('chandra', 4, 'Date')",
};
/** Every label in libc "C" order (bytes), as one PostgreSQL with eu-west's database would sort them. */
const C_ORDER = ["Banana", "Banana", "Date", "Date", "apple", "apple", "cherry", "cherry"];

const ITEMS_TOML = `
[[tables]]
table = "items"
placement = "geo_partitioned"
key = "tenant_id"

[admin]
port = 0
`;

let cluster: PgCluster;
let proxy: RunningProxy;
let client: pg.Client;

async function direct(index: number, database: string): Promise<pg.Client> {
  const server = cluster.servers[index]!;
  const c = new pg.Client({ host: server.host, port: server.port, user: "postgres", database });
  c.on("error", () => undefined);
  await c.connect();
  return c;
}

/** Creates region `index`'s "shop" (dropping the one there) with `options`, its table and rows. */
async function createShop(index: number, options: string): Promise<void> {
  const admin = await direct(index, "postgres");
  try {
    await admin.query("DROP DATABASE IF EXISTS shop WITH (FORCE)");
    await admin.query(`CREATE DATABASE shop ${options}`);
  } finally {
    await admin.end();
  }
  const shop = await direct(index, "shop");
  try {
    await shop.query(`${TABLE}; ${ROWS[index]}`);
  } finally {
    await shop.end();
  }
}

/** Proxies of this file run at once over the same servers: each needs its own node name. */
let nodes = 0;

/** Endpoints naming "shop", or (`clientsChoose`) no database: each client's own is used. */
function configFor(ports: readonly number[], clientsChoose = false) {
  const toml = regionsToml(ports, ITEMS_TOML)
    .replaceAll(', database = "postgres"', clientsChoose ? "" : ', database = "shop"')
    .replace("[server]\n", `[server]\nnode = "collation-${++nodes}"\n`);
  return parseConfig(toml, "collation.toml");
}

async function startShopProxy(clientsChoose = false): Promise<RunningProxy> {
  return startProxy({
    config: configFor(
      cluster.servers.map((server) => server.port),
      clientsChoose,
    ),
    directory: new MemoryDirectory([
      ["alice", "eu-west"],
      ["bob", "us-east"],
      ["chandra", "ap-south"],
    ]),
    logLevel: (process.env["GEO_LOG"] as "silent" | undefined) ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
  });
}

async function connectTo(running: RunningProxy): Promise<pg.Client> {
  const c = new pg.Client({ host: running.host, port: running.port, user: "postgres", database: "shop" });
  await c.connect();
  return c;
}

type Failure = { code?: string; message?: string; hint?: string };

async function failure(on: pg.Client, text: string, values?: unknown[]): Promise<Failure> {
  return (await on.query(text, values).then(
    () => ({}),
    (error: unknown) => error,
  )) as Failure;
}

async function labels(on: pg.Client, text: string): Promise<string[]> {
  return (await on.query<{ label: string }>(text)).rows.map((row) => row.label);
}

async function collationAlerts(on: pg.Client): Promise<{ subject: string; message: string }[]> {
  const alerts = await on.query<{ name: string; subject: string; message: string }>("SHOW ALERTS");
  return alerts.rows.filter((row) => row.name === "collation_differs");
}

async function scrape() {
  const admin = proxy.runtime.observability.admin;
  if (admin === undefined) throw new Error("the [admin] section did not start the admin port");
  return parseScrape(await (await fetch(`${admin.url}/metrics`)).text());
}

beforeAll(async () => {
  cluster = await startCluster({ count: 3 });
  for (const index of [0, 1, 2]) await createShop(index, index === AP_SOUTH ? ICU : LIBC);
  proxy = await startShopProxy();
  client = await connectTo(proxy);
});

afterAll(async () => {
  await client?.end().catch(() => undefined);
  await proxy?.close({ timeoutMs: 200 });
  await cluster?.stop();
});

const ACROSS = "SELECT label FROM items ORDER BY label, tenant_id, id";

describe("a region whose database has another default collation than the home region's", () => {
  it("raises collation_differs for that region alone in SHOW ALERTS, naming both collations", async () => {
    const alerts = await collationAlerts(client);
    expect(alerts.map((alert) => alert.subject)).toEqual(["ap-south/shop"]);
    expect(alerts[0]!.message).toContain('icu locale "und"');
    expect(alerts[0]!.message).toContain("home region eu-west");
    expect(alerts[0]!.message).toContain('libc, LC_COLLATE "C"');
  });

  it("shows the same alert as geoproxy_alert in /metrics", async () => {
    const metrics = await scrape();
    expect(metrics.value("geoproxy_alert", { name: "collation_differs", subject: "ap-south/shop" })).toBe(1);
    expect(
      metrics.value("geoproxy_alert", { name: "collation_differs", subject: "us-east/shop" }),
    ).toBeUndefined();
  });

  it("refuses an ordered read spanning it with 0A000 naming the region, both collations and the CREATE DATABASE fix", async () => {
    const error = await failure(client, ACROSS);
    expect(error.code).toBe("0A000");
    expect(error.message).toContain('region ap-south\'s database "shop"');
    expect(error.message).toContain('icu locale "und"');
    expect(error.message).toContain("home region eu-west");
    expect(error.hint).toContain(
      "CREATE DATABASE ... TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER libc LOCALE 'C'",
    );
  });

  it("refuses the other reads spanning it: a text filter, an aggregate, a DISTINCT, upper(), and through Parse/Bind/Execute", async () => {
    // ICU's root locale says 'apple' < 'B', "C" says 'apple' > 'B': each region would filter otherwise.
    for (const text of [
      "SELECT id FROM items WHERE label > 'B'",
      "SELECT min(label) FROM items",
      "SELECT DISTINCT label FROM items",
      // Compares nothing, but upper() follows each database's character classes ('é' stays 'é' under "C").
      "SELECT upper(label) FROM items",
    ]) {
      expect({ text, code: (await failure(client, text)).code }).toEqual({ text, code: "0A000" });
    }
    const extended = await failure(client, "SELECT label FROM items WHERE id > $1 ORDER BY label", [0]);
    expect(extended.code).toBe("0A000");
    expect(extended.hint).toContain("LOCALE_PROVIDER libc");
  });

  it("refuses it inside a transaction block too, failing the block as a failed statement does", async () => {
    await client.query("BEGIN");
    try {
      await client.query("SELECT label FROM items WHERE tenant_id = 'chandra'");
      expect((await failure(client, ACROSS)).code).toBe("0A000");
      expect((await failure(client, "SELECT 1")).code).toBe("25P02");
    } finally {
      await client.query("ROLLBACK");
    }
  });

  it("still answers a read spanning only regions with the home region's collation", async () => {
    expect(
      await labels(client, "SELECT label FROM items WHERE tenant_id IN ('alice', 'bob') ORDER BY label"),
    ).toEqual(["Banana", "Date", "apple", "cherry"]);
  });

  it("still answers a read in that region alone, in its own database's order", async () => {
    expect(
      await labels(client, "SELECT label FROM items WHERE tenant_id = 'chandra' ORDER BY label"),
    ).toEqual(["apple", "Banana", "cherry", "Date"]);
  });

  it("refuses a write spanning it too, and writes nothing anywhere", async () => {
    // Each region would pick the rows to change by its own order: 'apple' > 'B' in one, not in the other.
    const error = await failure(client, "UPDATE items SET label = label || '!' WHERE label > 'B'");
    expect(error.code).toBe("0A000");
    expect(error.message).toContain('region ap-south\'s database "shop"');
    const extended = await failure(client, "UPDATE items SET label = label || '!' WHERE label > $1", ["B"]);
    expect(extended.code).toBe("0A000");
    expect(
      await labels(client, "SELECT label FROM items WHERE tenant_id IN ('alice', 'bob') ORDER BY label"),
    ).toEqual(["Banana", "Date", "apple", "cherry"]);
  });

  it("still runs a write spanning only regions with the home region's collation", async () => {
    const updated = await client.query("UPDATE items SET label = label WHERE tenant_id IN ('alice', 'bob')");
    expect(updated.rowCount).toBe(4);
  });

  it("lifts the refusal and clears the alert once the region's database is created again with home's collation", async () => {
    await createShop(AP_SOUTH, LIBC);
    // The proxy's connections to the dropped database were ended by it: the first statements may
    // meet one of them (08006/57P01) before the pool has let it go.
    let answer: string[] | undefined;
    for (let attempt = 0; attempt < 5 && answer === undefined; attempt++) {
      const result = await client.query<{ label: string }>(ACROSS).then(
        (r) => r.rows.map((row) => row.label),
        (error: Failure) => {
          if (error.code === "0A000") throw error;
          return undefined;
        },
      );
      answer = result;
    }
    expect(answer).toEqual(C_ORDER);
    expect(await collationAlerts(client)).toEqual([]);
    expect((await scrape()).value("geoproxy_alert", { name: "collation_differs" })).toBeUndefined();
  });

  it("refuses again once the region's database is created anew with another collation", async () => {
    await createShop(AP_SOUTH, ICU);
    let code: string | undefined;
    // As above: a connection the drop ended may be met first.
    for (let attempt = 0; attempt < 5 && code !== "0A000"; attempt++)
      code = (await failure(client, ACROSS)).code;
    expect(code).toBe("0A000");
    expect((await collationAlerts(client)).map((alert) => alert.subject)).toEqual(["ap-south/shop"]);
  });

  it("keeps refusing while the region's server is down and after it is back, reading its database again", async () => {
    await cluster.stopServer(AP_SOUTH, "fast");
    try {
      // What was read last stands while the region cannot be read again.
      expect((await failure(client, ACROSS)).code).toBe("0A000");
    } finally {
      await cluster.startServer(AP_SOUTH);
    }
    expect(proxy.runtime.collations.needsRead("ap-south", "shop")).toBe(true);
    expect((await failure(client, ACROSS)).code).toBe("0A000");
    expect(proxy.runtime.collations.needsRead("ap-south", "shop")).toBe(false);
    expect((await collationAlerts(client)).map((alert) => alert.subject)).toEqual(["ap-south/shop"]);
  });

  it("refuses on a proxy started while that region was down, once the region answers", async () => {
    await cluster.stopServer(AP_SOUTH, "fast");
    const late = await startShopProxy();
    try {
      const lateClient = await connectTo(late);
      try {
        expect(await collationAlerts(lateClient)).toEqual([]);
        await cluster.startServer(AP_SOUTH);
        const error = await failure(lateClient, ACROSS);
        expect(error.code).toBe("0A000");
        expect(error.message).toContain("ap-south");
        expect((await collationAlerts(lateClient)).map((alert) => alert.subject)).toEqual(["ap-south/shop"]);
      } finally {
        await lateClient.end();
      }
    } finally {
      await late.close({ timeoutMs: 200 });
    }
  });
});

describe("endpoints that name no database, so each client's own is used", () => {
  it("compares the database a client names with home's of the same name, as the client's reads use them", async () => {
    const chosen = await startShopProxy(true);
    try {
      const own = new pg.Client({
        host: chosen.host,
        port: chosen.port,
        user: "postgres",
        database: "postgres",
      });
      await own.connect();
      try {
        // The proxy's own connections use "postgres", alike in every region: nothing differs yet.
        expect(await collationAlerts(own)).toEqual([]);
        const shop = await connectTo(chosen);
        try {
          const error = await failure(shop, ACROSS);
          expect(error.code).toBe("0A000");
          expect(error.message).toContain('region ap-south\'s database "shop"');
          expect(
            await labels(shop, "SELECT label FROM items WHERE tenant_id IN ('alice', 'bob') ORDER BY label"),
          ).toEqual(["Banana", "Date", "apple", "cherry"]);
        } finally {
          await shop.end();
        }
        expect((await collationAlerts(own)).map((alert) => alert.subject)).toEqual(["ap-south/shop"]);
      } finally {
        await own.end();
      }
    } finally {
      await chosen.close({ timeoutMs: 200 });
    }
  });
});
