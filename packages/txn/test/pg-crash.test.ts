import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type PgCluster, startCluster } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Coordinator, FileDecisionLog, Recovery, TableDecisionLog } from "../src/index.js";
import { countsById, PgConnection, PgConnector, preparedGids, SCHEMA } from "./support/pg.js";

const REGIONS = ["r0", "r1", "r2"] as const;
const PREFIX = "geo_crash";
const GRACE_MS = 300;
const FIXTURE_APP = "geo_crash_fixture";
const FIXTURE = fileURLToPath(new URL("./fixtures/crash-coordinator.ts", import.meta.url));

let cluster: PgCluster;
let admins: PgConnection[];
let connector: PgConnector;
let directory: string;

beforeAll(async () => {
  cluster = await startCluster({ count: 3, initSql: SCHEMA });
  connector = new PgConnector(new Map(REGIONS.map((r, i) => [r, cluster.servers[i]!.url])));
  admins = await Promise.all(REGIONS.map((r, i) => PgConnection.open(r, cluster.servers[i]!.url)));
  directory = await mkdtemp(join(tmpdir(), "geo-txn-crash-"));
});

afterAll(async () => {
  await Promise.all((admins ?? []).map((a) => a.close()));
  await cluster?.stop();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

/** Runs the fixture until it reports reaching `crashAt`, then kills it with SIGKILL; returns the gid. */
async function crashCoordinatorAt(crashAt: string, logPath: string, id: number): Promise<string> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      FIXTURE,
      logPath,
      PREFIX,
      crashAt,
      String(id),
      ...cluster.servers.map((s) => `${s.url}?application_name=${FIXTURE_APP}`),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const gid = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /READY (\S+)\n/.exec(output);
      if (match !== null) resolve(match[1]!);
    });
    child.on("exit", (code) =>
      reject(new Error(`fixture exited (${code}) before ${crashAt}:\n${output}${errors}`)),
    );
  });
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
  // The killed process's connections close; PostgreSQL rolls back whatever they had not prepared.
  await waitFor(async () => {
    const counts = await Promise.all(
      admins.map(async (admin) => {
        const result = await admin.query(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = '${FIXTURE_APP}'`,
        );
        return Number(result.rows[0]!["n"]);
      }),
    );
    return counts.every((n) => n === 0);
  });
  return gid;
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function restartedRecovery(logPath: string) {
  const log = await FileDecisionLog.open({ path: logPath });
  const coordinator = new Coordinator({ prefix: PREFIX, log });
  const recovery = new Recovery({ coordinator, log, connector, regions: REGIONS, graceMs: GRACE_MS });
  return { log, coordinator, recovery };
}

describe("a coordinator killed with SIGKILL mid-commit", () => {
  it("after some PREPAREs: recovery rolls back once the grace period has passed", async () => {
    const logPath = join(directory, "prepares.log");
    const gid = await crashCoordinatorAt("after-some-prepares", logPath, 1);
    expect(await preparedGids(admins)).toEqual([gid]);

    const { log, coordinator, recovery } = await restartedRecovery(logPath);
    const patient = new Recovery({ coordinator, log, connector, regions: REGIONS, graceMs: 60_000 });
    const early = await patient.runOnce();
    expect(early.waiting).toMatchObject([{ gid, region: "r0" }]);
    expect(early.rolledBack).toEqual([]);
    expect(await preparedGids(admins)).toEqual([gid]);
    expect(coordinator.inDoubt().map((t) => t.gid)).toEqual([gid]);

    await new Promise((r) => setTimeout(r, GRACE_MS));
    const late = await recovery.runOnce();
    expect(late.rolledBack).toEqual([{ gid, region: "r0" }]);
    expect((await log.lookup(gid))?.decision).toBe("abort");
    await log.close();
    expect(await countsById(admins, 1)).toEqual([0, 0, 0]);
    expect(await preparedGids(admins)).toEqual([]);
  });

  it("after some PREPAREs: the next owner of its file log rolls back at once, without the grace period", async () => {
    const logPath = join(directory, "abandoned.log");
    const gid = await crashCoordinatorAt("after-some-prepares", logPath, 5);
    expect(await preparedGids(admins)).toEqual([gid]);

    // The killed process's lock is taken over, which proves it can no longer decide.
    const log = await FileDecisionLog.open({ path: logPath });
    expect(log.tookOver?.reason).toBe("exited");
    const coordinator = new Coordinator({ prefix: PREFIX, log });
    const recovery = new Recovery({
      coordinator,
      log,
      connector,
      regions: REGIONS,
      graceMs: 60_000,
      abandonedBefore: log.ownedSince,
    });
    const report = await recovery.runOnce();
    expect(report.waiting).toEqual([]);
    expect(report.rolledBack).toEqual([{ gid, region: "r0" }]);
    expect((await log.lookup(gid))?.decision).toBe("abort");
    await log.close();
    expect(await countsById(admins, 5)).toEqual([0, 0, 0]);
    expect(await preparedGids(admins)).toEqual([]);
  });

  it("after the decision: recovery commits everywhere at once", async () => {
    const logPath = join(directory, "decision.log");
    const gid = await crashCoordinatorAt("after-decision", logPath, 2);
    expect(await preparedGids(admins)).toEqual([gid, gid, gid]);
    expect(await countsById(admins, 2)).toEqual([0, 0, 0]);

    const { log, recovery } = await restartedRecovery(logPath);
    const report = await recovery.runOnce();
    expect(report.committed.map((a) => a.region).sort()).toEqual(["r0", "r1", "r2"]);
    expect(report.completed).toEqual([gid]);
    expect(await log.pending()).toEqual([]);
    await log.close();
    expect(await countsById(admins, 2)).toEqual([1, 1, 1]);
    expect(await preparedGids(admins)).toEqual([]);
  });

  it("after the decision, with the table decision log: recovery commits everywhere", async () => {
    const gid = await crashCoordinatorAt("after-decision", cluster.servers[0]!.url, 4);
    expect(await preparedGids(admins)).toEqual([gid, gid, gid]);

    const home = await PgConnection.open("r0", cluster.servers[0]!.url);
    const log = await TableDecisionLog.open({ executor: home });
    const coordinator = new Coordinator({ prefix: PREFIX, log });
    const recovery = new Recovery({ coordinator, log, connector, regions: REGIONS, graceMs: GRACE_MS });
    const report = await recovery.runOnce();
    expect(report.committed.map((a) => a.region).sort()).toEqual(["r0", "r1", "r2"]);
    expect(report.completed).toEqual([gid]);
    expect(await log.pending()).toEqual([]);
    await home.close();
    expect(await countsById(admins, 4)).toEqual([1, 1, 1]);
    expect(await preparedGids(admins)).toEqual([]);
  });

  it("after some COMMIT PREPAREDs: recovery commits the rest", async () => {
    const logPath = join(directory, "commits.log");
    const gid = await crashCoordinatorAt("after-some-commits", logPath, 3);
    expect(await countsById(admins, 3)).toEqual([1, 0, 0]);
    expect(await preparedGids(admins)).toEqual([gid, gid]);

    const { log, recovery } = await restartedRecovery(logPath);
    const report = await recovery.runOnce();
    expect(report.committed.map((a) => a.region).sort()).toEqual(["r1", "r2"]);
    expect(report.completed).toEqual([gid]);
    await log.close();
    expect(await countsById(admins, 3)).toEqual([1, 1, 1]);
    expect(await preparedGids(admins)).toEqual([]);
  });
});
