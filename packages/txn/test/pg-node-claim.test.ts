import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ClaimChange,
  type ClaimConnection,
  type ClaimConnector,
  Coordinator,
  GidFactory,
  NodeClaim,
  Recovery,
} from "../src/index.js";
import { MemoryDecisionLog } from "./support/memory-decision-log.js";
import { countsById, PgConnection, PgConnector, preparedGids, SCHEMA } from "./support/pg.js";

const REGIONS = ["r0", "r1"] as const;
let cluster: PgCluster;
let admins: PgConnection[];
let urls: Map<string, string>;
/** Every claim connection opened, newest last. */
const opened: pg.Client[] = [];

beforeAll(async () => {
  cluster = await startCluster({ count: 2, initSql: SCHEMA });
  urls = new Map(REGIONS.map((r, i) => [r, cluster.servers[i]!.url]));
  admins = await Promise.all(REGIONS.map((r, i) => PgConnection.open(r, cluster.servers[i]!.url)));
});

afterAll(async () => {
  await Promise.all((admins ?? []).map((a) => a.close()));
  await cluster?.stop();
});

/** Claim connections over node-postgres, named so that a refused claim can name its holder. */
function claimConnector(applicationName: string): ClaimConnector {
  return {
    async connect(region): Promise<ClaimConnection> {
      const client = new pg.Client({
        connectionString: urls.get(region)!,
        application_name: applicationName,
      });
      client.on("error", () => {});
      const ended = new Promise<void>((resolve) => client.once("end", () => resolve()));
      await client.connect();
      opened.push(client);
      return {
        ended,
        query: async (sql) => {
          const result = await client.query(sql);
          return { rows: result.rows as Array<Record<string, unknown>>, command: result.command };
        },
        close: () => client.end().catch(() => {}),
      };
    },
  };
}

function claimOf(name: string, prefixes: string[], changes: ClaimChange[] = []): NodeClaim {
  return new NodeClaim({
    node: name,
    prefixes,
    connector: claimConnector(`claim ${name}`),
    onChange: (change) => changes.push(change),
  });
}

async function advisoryLocks(region: number): Promise<number> {
  const result = await admins[region]!.query(
    "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted",
  );
  return Number(result.rows[0]!["n"]);
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("the node claim against real PostgreSQL", () => {
  it("refuses a second claim on the same prefix in every region, naming the holder's backend", async () => {
    const first = claimOf("a", ["geo_a"]);
    const second = claimOf("a-again", ["geo_a"]);
    try {
      expect((await first.takeAll(REGIONS)).map((r) => r.state)).toEqual(["held", "held"]);
      const refused = await second.takeAll(REGIONS);
      expect(refused.map((r) => r.state)).toEqual(["elsewhere", "elsewhere"]);
      const r0 = refused[0]!;
      if (r0.state !== "elsewhere") throw new Error("expected a refusal");
      expect(r0.error).toMatchObject({ code: "55006", region: "r0" });
      expect(r0.holder?.applicationName).toBe("claim a");
      expect(r0.error.message).toContain("claim a");
      expect(second.held("r0")).toBe(false);
      expect(second.refusal(["r0", "r1"])).toMatchObject({ code: "55000" });
      expect(first.refusal(["r0", "r1"])).toBeNull();
    } finally {
      await first.close();
      await second.close();
    }
    expect(await advisoryLocks(0)).toBe(0);
  });

  it("collides on any one shared prefix, and a refused claim keeps none of its other locks", async () => {
    const a = claimOf("a", ["geo_a", "geo_a_mv"]);
    const aMv = claimOf("a_mv", ["geo_a_mv", "geo_a_mv_mv"]);
    const other = claimOf("b", ["geo_b", "geo_b_mv"]);
    try {
      expect((await a.take("r0")).state).toBe("held");
      expect((await aMv.take("r0")).state).toBe("elsewhere");
      expect((await other.take("r0")).state).toBe("held");
      // a's two locks and b's two: nothing left of the refused claim's geo_a_mv_mv.
      expect(await advisoryLocks(0)).toBe(4);
    } finally {
      await Promise.all([a.close(), aMv.close(), other.close()]);
    }
  });

  it("dies with its session: another claim takes it, and the first finds it lost, then held elsewhere", async () => {
    const changes: ClaimChange[] = [];
    const first = claimOf("a", ["geo_a"], changes);
    const second = claimOf("a-next", ["geo_a"]);
    try {
      expect((await first.take("r0")).state).toBe("held");
      await admins[0]!.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'claim a'",
      );
      await until(() => first.state("r0") === "lost");
      expect(first.refusal(["r0"])).toMatchObject({ code: "55000" });
      expect((await second.take("r0")).state).toBe("held");
      const [again] = await first.verify(["r0"]);
      expect(again?.state).toBe("elsewhere");
      expect(first.state("r0")).toBe("elsewhere");
      expect(changes.map((c) => c.state)).toEqual(["held", "lost", "elsewhere"]);
      await second.close();
      expect((await first.verify(["r0"]))[0]?.state).toBe("held");
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("finds a claim whose session answers but no longer holds its locks lost, and takes it again", async () => {
    const changes: ClaimChange[] = [];
    const first = claimOf("a", ["geo_a"], changes);
    try {
      await first.take("r1");
      // Released on the claim's own session: the check must compare with pg_locks, not only answer.
      await opened.at(-1)!.query("SELECT pg_advisory_unlock_all()");
      expect(await advisoryLocks(1)).toBe(0);
      expect((await first.verify(["r1"]))[0]?.state).toBe("held");
      expect(changes.map((c) => c.state)).toEqual(["held", "lost", "held"]);
      expect(await advisoryLocks(1)).toBe(1);
    } finally {
      await first.close();
    }
    expect(await advisoryLocks(1)).toBe(0);
  });

  it("refuses a commit over a region it does not hold, and recovery leaves that region alone", async () => {
    const holder = claimOf("c", ["geo_c"]);
    const ours = claimOf("c-twin", ["geo_c"]);
    const log = new MemoryDecisionLog();
    const connector = new PgConnector(urls);
    try {
      await holder.take("r1");
      await ours.takeAll(REGIONS);
      expect(ours.held("r0")).toBe(true);
      expect(ours.held("r1")).toBe(false);
      const coordinator = new Coordinator({ prefix: "geo_c", log, connector, claim: ours });
      const participants = await Promise.all(
        REGIONS.map(async (region, i) => {
          const connection = await PgConnection.open(region, cluster.servers[i]!.url);
          await connection.query("BEGIN");
          await connection.query(`INSERT INTO t VALUES (9001, '${region}')`);
          return connection;
        }),
      );
      await expect(coordinator.commit(participants)).rejects.toMatchObject({ code: "55000" });
      await Promise.all(participants.map((p) => p.close()));
      expect(await countsById(admins, 9001)).toEqual([0, 0]);

      // A transaction of this prefix prepared in r1 by whoever holds the claim there, long ago.
      const gid = new GidFactory("geo_c").next(Date.now() - 3_600_000);
      await admins[1]!.query("BEGIN");
      await admins[1]!.query("INSERT INTO t VALUES (9002, 'r1')");
      await admins[1]!.query(`PREPARE TRANSACTION '${gid}'`);
      const recovery = new Recovery({
        coordinator,
        log,
        connector,
        regions: REGIONS,
        graceMs: 0,
        abandonedBefore: Date.now(),
        claim: ours,
      });
      const report = await recovery.runOnce();
      expect(report.failures.map((f) => f.region)).toEqual(["r1"]);
      expect(report.rolledBack).toEqual([]);
      expect(await preparedGids(admins)).toEqual([gid]);
      await admins[1]!.query(`ROLLBACK PREPARED '${gid}'`);
    } finally {
      await holder.close();
      await ours.close();
    }
  });

  it("takes one claim for regions served by one database, instead of finding it held by itself", async () => {
    // Both regions on r0's server: one session-level lock per database, whoever asks.
    const sameServer: ClaimConnector = {
      connect: (_region) => claimConnector("geoproxy node shared").connect("r0"),
    };
    const before = opened.length;
    const shared = new NodeClaim({
      node: "shared",
      prefixes: ["geo_shared"],
      connector: sameServer,
      siteOf: () => "r0-database",
    });
    try {
      const results = await shared.takeAll(["a", "b"]);
      expect(results.map((result) => result.state)).toEqual(["held", "held"]);
      expect(shared.held("a") && shared.held("b")).toBe(true);
      expect(opened.length - before).toBe(1);
      expect((await shared.verify(["a", "b"])).map((result) => result.state)).toEqual(["held", "held"]);
    } finally {
      await shared.close();
    }
    // Without it, the second region's session finds the first one's lock.
    const apart = new NodeClaim({ node: "apart", prefixes: ["geo_apart"], connector: sameServer });
    try {
      const states = (await apart.takeAll(["a", "b"])).map((result) => result.state).sort();
      expect(states).toEqual(["elsewhere", "held"]);
    } finally {
      await apart.close();
    }
  });
});
