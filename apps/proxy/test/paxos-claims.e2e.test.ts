import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PaxosClaims } from "../src/directory/paxos-claims.js";
import { Quorum } from "../src/directory/quorum.js";
import type { RegionRunner, SqlRows } from "../src/directory/region-runner.js";
import { SharedTables } from "../src/directory/shared-tables.js";
import { REGIONS, type RegionName } from "./support/fake-regions.js";
import { connectDirect } from "./support/move-regions.js";
import { until } from "./support/shared-proxies.js";

// Claims of new keys by Paxos, against three real PostgreSQL acceptors, with the interleavings
// chosen here: each proposer's statements can be kept from some regions (as if those regions were
// out of its reach), which real networks do not do on cue.

let cluster: PgCluster;
let direct: Record<RegionName, pg.Client>;
/** The acceptors as the proposers reach them: a few connections per region. */
const pools = {} as Record<RegionName, pg.Pool>;
const tables = new SharedTables("geoproxy_directory");

beforeAll(async () => {
  cluster = await startCluster({ count: 3 });
  direct = await connectDirect(cluster);
  for (const [i, region] of REGIONS.entries()) {
    await direct[region].query(tables.createSql());
    const server = cluster.servers[i]!;
    pools[region] = new pg.Pool({
      host: server.host,
      port: server.port,
      user: "postgres",
      database: "postgres",
      max: 4,
    });
  }
});

beforeEach(async () => {
  for (const region of REGIONS) await direct[region].query(`TRUNCATE ${tables.ballots}, ${tables.directory}`);
});

afterAll(async () => {
  for (const client of Object.values(direct ?? {})) await client.end().catch(() => undefined);
  for (const pool of Object.values(pools)) await pool.end().catch(() => undefined);
  await cluster?.stop();
});

interface Proposer {
  readonly claims: PaxosClaims;
  /** The regions its statements reach. */
  readonly reach: Set<RegionName>;
  /** Keeps statements matching `step` from `regions` too (none: all reach again). */
  keep(step?: RegExp, regions?: readonly RegionName[]): void;
}

/**
 * A proposer whose statements reach the regions `reach` says (all of them by default): a
 * statement kept from a region fails there at once, as an unreachable region's does.
 */
function proposer(node: string): Proposer {
  const reach = new Set<RegionName>(REGIONS);
  let kept: { step: RegExp; regions: readonly RegionName[] } | undefined;
  const runner = {
    runWithin: async (region: RegionName, sql: string): Promise<SqlRows> => {
      if (!reach.has(region) || (kept?.regions.includes(region) && kept.step.test(sql)))
        throw new Error(`region ${region} is out of reach`);
      const result = await pools[region].query(sql);
      const rows = (Array.isArray(result) ? result.at(-1) : result).rows as Record<string, unknown>[];
      return {
        tag: "OK",
        rows: rows.map((row) =>
          Object.fromEntries(
            Object.entries(row).map(([k, v]) => [
              k,
              v === null ? null : typeof v === "boolean" ? (v ? "t" : "f") : String(v),
            ]),
          ),
        ),
      };
    },
  } as unknown as RegionRunner;
  const quorum = new Quorum(runner, REGIONS, true, 1000);
  return {
    claims: new PaxosClaims(quorum, tables, node),
    reach,
    keep: (step, regions = REGIONS) => {
      kept = step === undefined ? undefined : { step, regions };
    },
  };
}

async function acceptedIn(key: string): Promise<Record<RegionName, string | null>> {
  const out = {} as Record<RegionName, string | null>;
  for (const region of REGIONS) {
    const { rows } = await direct[region].query(
      `SELECT accepted_region FROM ${tables.ballots} WHERE key = $1`,
      [key],
    );
    out[region] = rows[0]?.accepted_region ?? null;
  }
  return out;
}

describe("claims of new keys by Paxos, every region an acceptor", () => {
  it("chooses the proposer's region when it reaches a majority, and learns it as each region's entry", async () => {
    const a = proposer("eu-proxy");
    a.reach.delete("ap-south");
    expect(await a.claims.claim(["k1", "k2"], "eu-west")).toEqual(
      new Map([
        ["k1", "eu-west"],
        ["k2", "eu-west"],
      ]),
    );
    expect(await acceptedIn("k1")).toEqual({ "eu-west": "eu-west", "us-east": "eu-west", "ap-south": null });
  });

  it("keeps a region a majority accepted, though the proposer never learnt it: a later claim elsewhere finds and proposes it", async () => {
    const a = proposer("eu-proxy");
    // A's accepts land in eu-west and us-east (a majority: chosen), then A goes away.
    a.reach.delete("ap-south");
    await a.claims.claim(["k"], "eu-west");
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const region of REGIONS) await direct[region].query(`TRUNCATE ${tables.directory}`);
    // B reaches only us-east and ap-south: one of them accepted A's region.
    const b = proposer("us-proxy");
    b.reach.delete("eu-west");
    expect(await b.claims.claim(["k"], "us-east")).toEqual(new Map([["k", "eu-west"]]));
  });

  it("lets a later proposer choose its own region when an earlier one's accept reached only a minority, and the earlier one then adopts it", async () => {
    const a = proposer("eu-proxy");
    // A is promised everywhere, but its accepts reach eu-west alone: nothing is chosen, and after
    // its rounds it gives up.
    a.keep(/^INSERT INTO .* \(key, promised_n, promised_by, accepted_n/, ["us-east", "ap-south"]);
    await expect(a.claims.claim(["k"], "eu-west")).rejects.toThrow();
    // Its last accept in eu-west was still on its way when the claim gave up.
    await until(async () => (await acceptedIn("k"))["eu-west"] === "eu-west", 2000);
    expect(await acceptedIn("k")).toEqual({ "eu-west": "eu-west", "us-east": null, "ap-south": null });
    // B reaches us-east and ap-south, neither of which accepted anything: it chooses us-east.
    const b = proposer("us-proxy");
    b.reach.delete("eu-west");
    expect(await b.claims.claim(["k"], "us-east")).toEqual(new Map([["k", "us-east"]]));
    // A, in reach of every region again, proposes with a higher ballot and finds B's choice.
    a.keep();
    expect(await a.claims.claim(["k"], "eu-west")).toEqual(new Map([["k", "us-east"]]));
    const accepted = await acceptedIn("k");
    expect(Object.values(accepted).filter((region) => region === "us-east").length).toBeGreaterThanOrEqual(2);
  });

  it("answers a key's newest directory entry, not its first placement, once it has moved", async () => {
    const a = proposer("eu-proxy");
    expect(await a.claims.claim(["k"], "eu-west")).toEqual(new Map([["k", "eu-west"]]));
    // The key moved to ap-south since (version 1), its entry written in two regions of three.
    for (const region of ["us-east", "ap-south"] as const)
      await direct[region].query(
        `INSERT INTO ${tables.directory} (key, region, version) VALUES ('k', 'ap-south', 1) ON CONFLICT (key) DO UPDATE SET region = 'ap-south', version = 1`,
      );
    const b = proposer("us-proxy");
    b.reach.delete("ap-south");
    expect(await b.claims.claim(["k"], "us-east")).toEqual(new Map([["k", "ap-south"]]));
  });

  it("places each of 200 keys claimed by three proposers at once in one region, the same for all three", async () => {
    const proposers = [proposer("eu-proxy"), proposer("us-proxy"), proposer("ap-proxy")];
    const wanted: RegionName[] = ["eu-west", "us-east", "ap-south"];
    const keys = Array.from({ length: 200 }, (_, i) => `race-${i}`);
    const results = await Promise.all(
      proposers.map((p, i) => Promise.all(keys.map((key) => p.claims.claim([key], wanted[i]!)))),
    );
    for (const [i, key] of keys.entries()) {
      const answers = results.map((perProposer) => perProposer[i]!.get(key));
      expect(new Set(answers).size, key).toBe(1);
      expect(wanted).toContain(answers[0]);
    }
  });
});
