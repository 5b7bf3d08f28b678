import { existsSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPortOpen, type PgCluster, type PgReplica, startCluster, startReplica } from "../src/index.js";

async function query(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const countOn = async (url: string, id: number) =>
  Number((await query(url, `SELECT count(*) AS n FROM replicated WHERE id = ${id}`))[0]?.["n"]);

describe("startReplica", () => {
  let cluster: PgCluster;
  let replica: PgReplica;

  beforeAll(async () => {
    cluster = await startCluster({ initSql: "CREATE TABLE replicated (id int);" });
    replica = await startReplica(cluster);
  });

  afterAll(async () => {
    await replica?.stop();
    await cluster?.stop();
  });

  it("starts a hot standby on its own port and folder that reports being in recovery", async () => {
    const primary = cluster.servers[0]!;
    expect(replica.port).not.toBe(primary.port);
    expect(replica.dataDir).not.toBe(primary.dataDir);
    expect(replica.primary).toBe(primary);
    expect(existsSync(`${replica.dataDir}/standby.signal`)).toBe(true);
    const [row] = await query(replica.url, "SELECT pg_is_in_recovery() AS r");
    expect(row?.["r"]).toBe(true);
  });

  it("refuses writes on the replica with 25006", async () => {
    await expect(query(replica.url, "INSERT INTO replicated VALUES (0)")).rejects.toMatchObject({
      code: "25006",
    });
  });

  it("shows a row written on the primary, holds it back while replay is paused, and shows it after resume", async () => {
    const primaryUrl = cluster.servers[0]!.url;
    await query(primaryUrl, "INSERT INTO replicated VALUES (1)");
    await eventually(async () => (await countOn(replica.url, 1)) === 1);

    await query(replica.url, "SELECT pg_wal_replay_pause()");
    await eventually(
      async () =>
        (await query(replica.url, "SELECT pg_get_wal_replay_pause_state() AS s"))[0]?.["s"] === "paused",
    );
    await query(primaryUrl, "INSERT INTO replicated VALUES (2)");
    // The WAL reaches the standby (its receive position passes the write) but is not replayed.
    const [{ lsn } = {}] = await query(primaryUrl, "SELECT pg_current_wal_lsn()::text AS lsn");
    await eventually(
      async () =>
        (await query(replica.url, `SELECT pg_last_wal_receive_lsn() >= '${lsn}'::pg_lsn AS ok`))[0]?.[
          "ok"
        ] === true,
    );
    expect(await countOn(replica.url, 2)).toBe(0);

    await query(replica.url, "SELECT pg_wal_replay_resume()");
    await eventually(async () => (await countOn(replica.url, 2)) === 1);
  });

  it("stops and starts again on the same port, then stop() removes its folder", async () => {
    const extra = await startReplica(cluster.servers[0]!);
    try {
      await extra.stopServer("fast");
      expect(await isPortOpen(extra.port)).toBe(false);
      await extra.startServer();
      const [row] = await query(extra.url, "SELECT pg_is_in_recovery() AS r");
      expect(row?.["r"]).toBe(true);
    } finally {
      await extra.stop();
    }
    expect(existsSync(extra.dataDir)).toBe(false);
  });
});
