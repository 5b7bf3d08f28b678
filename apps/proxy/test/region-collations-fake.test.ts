import { Writable } from "node:stream";
import { parseConfig, Topology } from "@geo/core";
import { BackendConnection, type ConnectOptions } from "@geo/pool";
import { PgError } from "@geo/proto";
import { FakeBackend } from "@geo/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../src/log.js";
import { RegionCollations } from "../src/server/region-collations.js";

/**
 * When the watch reads a region's collation, seen from fake backends on real sockets: each answers
 * the collation statement with the row it is told, and counts how often it was asked.
 */

const C = { datcollate: "C", datctype: "C", datlocprovider: "c" };
const ICU = { datcollate: "C", datctype: "C", datlocprovider: "i", daticulocale: "und" };

interface Region {
  readonly fake: FakeBackend;
  row: Record<string, unknown>;
  reads: number;
}

const started: FakeBackend[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((fake) => fake.close()));
});

async function region(row: Record<string, unknown>, answersCollation = true): Promise<Region> {
  const state = { row, reads: 0 } as { row: Record<string, unknown>; reads: number; fake: FakeBackend };
  state.fake = await FakeBackend.start({
    rules: answersCollation
      ? [
          {
            match: /pg_catalog\.pg_database d WHERE/,
            reply: () => {
              state.reads++;
              return { columns: ["j", "e", "v"], rows: [[JSON.stringify(state.row), "UTF8", null]] };
            },
          },
        ]
      : [],
  });
  started.push(state.fake);
  return state;
}

function topology(home: Region, other: Region): Topology {
  const toml = `[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "127.0.0.1", port = ${home.fake.port}, database = "shop", user = "postgres" }

[[topology.regions]]
id = "ap-south"
primary = { host = "127.0.0.1", port = ${other.fake.port}, database = "shop", user = "postgres" }
`;
  return Topology.fromConfig(parseConfig(toml, "collations.toml"));
}

/** Log lines as objects. */
function capture(): { lines: Record<string, unknown>[]; logger: ReturnType<typeof createLogger> } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n"))
        if (line.trim() !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger("info", sink) };
}

/** A watch over the two regions whose connects can be made to fail, as a server that is down. */
async function watched(home: Region, other: Region, logger = createLogger("silent")) {
  let down = false;
  const collations = new RegionCollations(topology(home, other), logger);
  const connect = collations.watch(async (options: ConnectOptions) => {
    if (down && options.port === other.fake.port)
      throw new PgError({ code: "08001", message: "connection refused" });
    return BackendConnection.connect(options);
  });
  const open = (fake: FakeBackend) =>
    connect({
      host: "127.0.0.1",
      port: fake.port,
      database: "shop",
      user: "postgres",
      connectTimeoutMs: 2000,
    });
  const refused = () => collations.refusal(["eu-west", "ap-south"], () => "shop");
  return {
    collations,
    open,
    refused,
    setDown(value: boolean) {
      down = value;
    },
  };
}

describe("reading each region's database collation as its connections open", () => {
  it("reads on the first connection only while the region's connections stay open", async () => {
    const home = await region(C);
    const other = await region(ICU);
    const { open, refused } = await watched(home, other);
    const homeConnection = await open(home.fake);
    const first = await open(other.fake);
    expect(refused()?.code).toBe("0A000");
    // The database cannot change under an open connection: a second one is not read.
    other.row = C;
    const second = await open(other.fake);
    expect(other.reads).toBe(1);
    expect(refused()?.code).toBe("0A000");
    for (const c of [first, second, homeConnection]) await c.close();
  });

  it("reads again after every connection to the region had closed", async () => {
    const home = await region(C);
    const other = await region(ICU);
    const { open, refused } = await watched(home, other);
    await open(home.fake);
    await (await open(other.fake)).close();
    other.row = C;
    const again = await open(other.fake);
    expect(other.reads).toBe(2);
    expect(refused()).toBeNull();
    await again.close();
  });

  it("reads again after a connection to the region broke", async () => {
    const home = await region(C);
    const other = await region(C);
    const { open, refused } = await watched(home, other);
    await open(home.fake);
    const kept = await open(other.fake);
    const broken = await open(other.fake);
    broken.fail(new PgError({ code: "08006", message: "server closed the connection" }));
    other.row = ICU;
    const next = await open(other.fake);
    expect(other.reads).toBe(2);
    expect(refused()?.message).toContain('icu locale "und"');
    await Promise.all([kept.close(), next.close()]);
  });

  it("reads again when the region answers after a connection to it could not be opened", async () => {
    const home = await region(C);
    const other = await region(ICU);
    const { open, refused, setDown } = await watched(home, other);
    await open(home.fake);
    const kept = await open(other.fake);
    setDown(true);
    await expect(open(other.fake)).rejects.toMatchObject({ code: "08001" });
    setDown(false);
    other.row = C;
    const back = await open(other.fake);
    expect(other.reads).toBe(2);
    expect(refused()).toBeNull();
    await Promise.all([kept.close(), back.close()]);
  });

  it("gives the alert fact only while the region differs, naming region and database", async () => {
    const home = await region(C);
    const other = await region(ICU);
    const { collations, open } = await watched(home, other);
    await open(home.fake);
    const first = await open(other.fake);
    expect(collations.facts().map((fact) => [fact.name, fact.subject])).toEqual([
      ["collation_differs", "ap-south/shop"],
    ]);
    await first.close();
    other.row = C;
    await open(other.fake);
    expect(collations.facts()).toEqual([]);
  });

  it("logs a warning naming both regions and both collations, and when they match again", async () => {
    const home = await region(C);
    const other = await region(ICU);
    const { lines, logger } = capture();
    const { open } = await watched(home, other, logger);
    // The other region first: the warning waits for home's collation to compare with.
    const first = await open(other.fake);
    await open(home.fake);
    await first.close();
    other.row = C;
    await open(other.fake);
    await new Promise((resolve) => setImmediate(resolve));
    const warnings = lines.filter((line) => line["level"] === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      region: "ap-south",
      homeRegion: "eu-west",
      collation: 'icu locale "und", LC_COLLATE "C", LC_CTYPE "C", UTF8',
      homeCollation: 'libc, LC_COLLATE "C", LC_CTYPE "C", UTF8',
    });
    expect(String(warnings[0]!["msg"])).toContain("ap-south");
    expect(lines.filter((line) => line["level"] === 30).map((line) => line["region"])).toEqual(["ap-south"]);
  });

  it("reads a server that two regions share once, for both", async () => {
    const shared = await region(ICU);
    const { collations, open, refused } = await watched(shared, shared);
    const connection = await open(shared.fake);
    expect(shared.reads).toBe(1);
    expect(collations.needsRead("eu-west", "shop")).toBe(false);
    expect(collations.needsRead("ap-south", "shop")).toBe(false);
    expect(refused()).toBeNull();
    await connection.close();
  });

  it("leaves a server that cannot answer the catalog statement usable and unchecked, asking it once", async () => {
    const home = await region(C);
    const other = await region(ICU, false);
    const { open, refused } = await watched(home, other);
    await open(home.fake);
    const first = await open(other.fake);
    const second = await open(other.fake);
    expect((await second.simpleQuery("SELECT 1")).rows).toEqual([["1"]]);
    expect(other.fake.statements.filter((s) => /pg_database/.test(s.sql))).toHaveLength(1);
    expect(refused()).toBeNull();
    await Promise.all([first.close(), second.close()]);
  });
});
