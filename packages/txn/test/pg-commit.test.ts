import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PgCluster, startCluster } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Coordinator, FileDecisionLog, GidFactory, Recovery, TableDecisionLog } from "../src/index.js";
import { countsById, PgConnection, PgConnector, preparedGids, SCHEMA } from "./support/pg.js";

const REGIONS = ["r0", "r1", "r2"] as const;
let cluster: PgCluster;
let admins: PgConnection[];
let connector: PgConnector;
let directory: string;
let nextId = 1;

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: SCHEMA });
  connector = new PgConnector(new Map(REGIONS.map((r, i) => [r, cluster.servers[i]!.url])));
  admins = await Promise.all(REGIONS.map((r, i) => PgConnection.open(r, cluster.servers[i]!.url)));
  directory = await mkdtemp(join(tmpdir(), "geo-txn-pg-"));
});

afterAll(async () => {
  await Promise.all((admins ?? []).map((a) => a.close()));
  await cluster?.stop();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

/** One connection per region inside BEGIN, each having inserted row `id`. */
async function writeEverywhere(id: number, count: number = REGIONS.length): Promise<PgConnection[]> {
  return Promise.all(
    REGIONS.slice(0, count).map(async (region, i) => {
      const connection = await PgConnection.open(region, cluster.servers[i]!.url);
      await connection.query("BEGIN");
      await connection.query(`INSERT INTO t VALUES (${id}, '${region}')`);
      return connection;
    }),
  );
}

async function withFileLog<T>(name: string, body: (log: FileDecisionLog) => Promise<T>): Promise<T> {
  const log = await FileDecisionLog.open({ path: join(directory, `${name}.log`) });
  try {
    return await body(log);
  } finally {
    await log.close();
  }
}

describe("two-phase commit against real PostgreSQL", () => {
  it("commits a write in three regions everywhere and leaves nothing prepared", async () => {
    const id = nextId++;
    await withFileLog("commit", async (log) => {
      const coordinator = new Coordinator({ prefix: "geo_pg", log });
      const participants = await writeEverywhere(id);
      const result = await coordinator.commit(participants);
      expect(result.outcome).toBe("committed");
      await Promise.all(participants.map((p) => p.close()));
    });
    expect(await countsById(admins, id)).toEqual([1, 1, 1]);
    expect(await preparedGids(admins)).toEqual([]);
  });

  it("commits nothing anywhere when a participant refuses PREPARE with a deferred unique violation", async () => {
    const id = nextId++;
    await admins[1]!.query(`INSERT INTO u VALUES (${id})`);
    await withFileLog("refuse", async (log) => {
      const coordinator = new Coordinator({ prefix: "geo_pg", log });
      const participants = await writeEverywhere(id);
      // Deferred: the duplicate is only detected when PREPARE TRANSACTION checks constraints.
      await participants[1]!.query(`INSERT INTO u VALUES (${id})`);
      await expect(coordinator.commit(participants)).rejects.toMatchObject({ code: "23505", region: "r1" });
      await Promise.all(participants.map((p) => p.close()));
    });
    expect(await countsById(admins, id)).toEqual([0, 0, 0]);
    expect(await preparedGids(admins)).toEqual([]);
  });

  it("resolves through recovery a participant whose backend vanished right after PREPARE", async () => {
    const id = nextId++;
    const participants = await writeEverywhere(id);
    const victimPid = await participants[2]!.pid();
    await withFileLog("vanish", async (log) => {
      const coordinator = new Coordinator({
        prefix: "geo_pg",
        log,
        observer: {
          onStep: async ({ step, region }) => {
            if (step === "prepared" && region === "r2") {
              await admins[2]!.query(`SELECT pg_terminate_backend(${victimPid})`);
            }
          },
        },
      });
      const result = await coordinator.commit(participants);
      expect(result.outcome).toBe("in-doubt");
      expect(result.unresolved).toEqual(["r2"]);
      expect(await countsById(admins, id)).toEqual([1, 1, 0]);

      const recovery = new Recovery({ coordinator, log, connector, regions: REGIONS, graceMs: 60_000 });
      const report = await recovery.runOnce();
      expect(report.committed).toEqual([{ gid: result.gid, region: "r2" }]);
      expect(coordinator.inDoubt()).toEqual([]);
    });
    await Promise.all(participants.map((p) => p.close()));
    expect(await countsById(admins, id)).toEqual([1, 1, 1]);
    expect(await preparedGids(admins)).toEqual([]);
  });

  it("leaves another system's prepared transactions untouched through recovery", async () => {
    const foreign = ["foreign_tx_1", new GidFactory("geo_pg_x").next()];
    for (const [i, gid] of foreign.entries()) {
      const other = await PgConnection.open("r0", cluster.servers[0]!.url);
      await other.query("BEGIN");
      await other.query(`INSERT INTO t VALUES (${1000 + i}, 'foreign')`);
      await other.query(`PREPARE TRANSACTION '${gid}'`);
      await other.close();
    }
    await withFileLog("foreign", async (log) => {
      const coordinator = new Coordinator({ prefix: "geo_pg", log });
      const recovery = new Recovery({ coordinator, log, connector, regions: REGIONS, graceMs: 0 });
      const report = await recovery.runOnce();
      expect(report.rolledBack).toEqual([]);
      expect(report.committed).toEqual([]);
    });
    expect(await preparedGids(admins)).toEqual([...foreign].sort());
    for (const gid of foreign) await admins[0]!.query(`ROLLBACK PREPARED '${gid}'`);
  });

  it("keeps decisions in a table in the home region: first decision wins, even racing, completion, compaction", async () => {
    const home = await PgConnection.open("r0", cluster.servers[0]!.url);
    const log = await TableDecisionLog.open({ executor: home });
    await TableDecisionLog.open({ executor: home });
    const coordinator = new Coordinator({ prefix: "geo_tbl", log });
    const gid = coordinator.newGid();
    const abort = {
      gid,
      decision: "abort" as const,
      participants: ["r0", "r'1"],
      decidedAt: 1_700_000_000_123,
    };
    expect(await log.decide(abort)).toEqual(abort);
    expect(await log.decide({ ...abort, decision: "commit" })).toEqual(abort);
    expect(await log.pending()).toEqual([abort]);
    await log.complete(gid);
    expect(await log.pending()).toEqual([]);
    expect(await log.lookup(gid)).toEqual(abort);

    const racers = await Promise.all([0, 1].map(() => PgConnection.open("r0", cluster.servers[0]!.url)));
    const raced = coordinator.newGid();
    const both = await Promise.all(
      racers.map((executor, i) =>
        TableDecisionLog.open({ executor }).then((racer) =>
          racer.decide({ ...abort, gid: raced, decision: i === 0 ? "commit" : "abort" }),
        ),
      ),
    );
    expect(both[0]!.decision).toBe(both[1]!.decision);
    await Promise.all(racers.map((r) => r.close()));

    const id = nextId++;
    const participants = await writeEverywhere(id, 2);
    const result = await coordinator.commit(participants);
    expect(result.outcome).toBe("committed");
    expect((await log.lookup(result.gid))?.decision).toBe("commit");
    await log.compact();
    expect(await log.lookup(result.gid)).toBeUndefined();
    expect(await log.lookup(gid)).toEqual(abort);
    await Promise.all(participants.map((p) => p.close()));
    await home.close();
    expect(await countsById(admins, id)).toEqual([1, 1, 0]);
    expect(await preparedGids(admins)).toEqual([]);
  });
});
