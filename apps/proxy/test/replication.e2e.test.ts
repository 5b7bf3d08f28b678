import { connect } from "node:net";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { encodeCancelRequest, encodeQuery, PgError } from "@geo/proto";
import { type PgCluster, RawClient, startCluster } from "@geo/testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { txnSection } from "./support/txn-data-dir.js";

/**
 * Replication connections (`replication=database` / `true`) through geoproxy in one-region mode:
 * relayed to the region's primary on a connection of their own, message for message, against a
 * real PostgreSQL 15 with `wal_level = logical`. The region's endpoint names no user, so each
 * client logs in to the server as its own role.
 */

let cluster: PgCluster;
let proxy: RunningProxy;

beforeAll(async () => {
  cluster = await startCluster({
    initSql: `CREATE ROLE app_user LOGIN;
CREATE DATABASE shop;
\\c shop
CREATE TABLE items (id int PRIMARY KEY, name text);
ALTER TABLE items REPLICA IDENTITY FULL;
GRANT ALL ON items TO app_user;
CREATE PUBLICATION alltables FOR ALL TABLES;`,
  });
  const server = cluster.servers[0]!;
  proxy = await startProxy({
    config: parseConfig(
      `[server]
host = "127.0.0.1"
port = 0

[[topology.regions]]
id = "solo"
home = true
primary = { host = "127.0.0.1", port = ${server.port}, database = "shop" }

[routing]
default_placement = { placement = "pinned", region = "solo" }
${txnSection()}`,
      "one-region.toml",
    ),
    directory: new MemoryDirectory([]),
    logLevel: (process.env["GEO_LOG"] as "silent" | undefined) ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
  });
});

afterAll(async () => {
  await proxy?.close({ timeoutMs: 200 });
  await cluster?.stop();
});

type Target = "proxy" | "direct";

function portOf(target: Target): number {
  return target === "proxy" ? proxy.port : cluster.servers[0]!.port;
}

function replicationClient(target: Target, replication: string, user = "postgres"): Promise<RawClient> {
  return RawClient.connect({
    host: "127.0.0.1",
    port: portOf(target),
    user,
    database: "shop",
    parameters: { replication, application_name: "walsender-test" },
  });
}

async function direct(sql: string): Promise<(string | null)[][]> {
  const client = await RawClient.connect({
    host: "127.0.0.1",
    port: portOf("direct"),
    user: "postgres",
    database: "shop",
  });
  try {
    const result = await client.query(sql);
    if (result.error !== undefined) throw result.error;
    return result.rows.map((row) => [...row]);
  } finally {
    await client.close();
  }
}

/** Asks the server until `check` holds (each answer is the server's state, not a timing). */
async function until(sql: string, check: (rows: (string | null)[][]) => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (check(await direct(sql))) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the server never reached the expected state: ${sql}`);
}

describe("a replication connection with one region", () => {
  it("streams a logical subscription (postgres.js subscribe) of the changes written through the proxy", async () => {
    const subscriber = postgres({
      host: "127.0.0.1",
      port: proxy.port,
      user: "postgres",
      database: "shop",
      publications: "alltables",
      onnotice: () => undefined,
    });
    const writer = postgres({
      host: "127.0.0.1",
      port: proxy.port,
      user: "app_user",
      database: "shop",
      max: 1,
    });
    const events: unknown[] = [];
    let seen: () => void = () => undefined;
    const allSeen = new Promise<void>((resolve) => {
      seen = resolve;
    });
    try {
      await subscriber.subscribe("*:items", (row, info) => {
        events.push([info.command, row === null ? null : { ...row }]);
        if (events.length === 3) seen();
      });
      await writer`INSERT INTO items VALUES (1, 'one')`;
      await writer`UPDATE items SET name = 'uno' WHERE id = 1`;
      await writer`DELETE FROM items WHERE id = 1`;
      await allSeen;
      expect(events).toEqual([
        ["insert", { id: 1, name: "one" }],
        ["update", { id: 1, name: "uno" }],
        ["delete", { id: 1, name: "uno" }],
      ]);
    } finally {
      await writer.end();
      await subscriber.end();
    }
    // The subscription's walsender ended with its client: its temporary slot is gone.
    await until(
      "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'postgresjs_%'",
      (rows) => rows[0]?.[0] === "0",
    );
  });

  it("answers walsender commands as the server does, logical and physical", async () => {
    const answers = async (target: Target) => {
      const out: unknown[] = [];
      for (const replication of ["database", "true"]) {
        const client = await replicationClient(target, replication);
        try {
          const identify = await client.query("IDENTIFY_SYSTEM");
          out.push([
            replication,
            identify.columns,
            identify.rows.map((row) => [row[0], row[3]]),
            identify.status,
          ]);
          const timeline = await client.query("SHOW wal_level");
          out.push([timeline.rows, timeline.tags]);
          const wrong = await client.query("START_REPLICATION SLOT no_such_slot LOGICAL 0/0");
          out.push(wrong.error?.code);
        } finally {
          await client.close();
        }
      }
      return out;
    };
    const straight = await answers("direct");
    expect(straight[0]).toEqual([
      "database",
      ["systemid", "timeline", "xlogpos", "dbname"],
      [[expect.stringMatching(/^\d+$/), "shop"]],
      "I",
    ]);
    expect(await answers("proxy")).toEqual(straight);
  });

  it("gives the client its walsender's process id, and ends the walsender when the client leaves", async () => {
    const client = await replicationClient("proxy", "database");
    const created = await client.query("CREATE_REPLICATION_SLOT geo_test_slot TEMPORARY LOGICAL pgoutput");
    expect(created.error).toBeUndefined();
    expect(created.columns).toEqual(["slot_name", "consistent_point", "snapshot_name", "output_plugin"]);
    const [slot] = await direct(
      "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'geo_test_slot'",
    );
    expect(slot?.[0]).toBe(String(client.processId));
    const [walsender] = await direct(
      `SELECT backend_type, application_name FROM pg_stat_activity WHERE pid = ${client.processId}`,
    );
    expect(walsender).toEqual(["walsender", "walsender-test"]);
    await client.close();
    await until(
      "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'geo_test_slot'",
      (rows) => rows[0]?.[0] === "0",
    );
    await until(
      `SELECT count(*) FROM pg_stat_activity WHERE pid = ${slot?.[0]}`,
      (rows) => rows[0]?.[0] === "0",
    );
  });

  it("cancels the walsender's command with the client's CancelRequest", async () => {
    const client = await replicationClient("proxy", "database");
    const holder = await RawClient.connect({
      host: "127.0.0.1",
      port: portOf("direct"),
      user: "postgres",
      database: "shop",
    });
    try {
      // An open transaction that wrote holds back the new slot's snapshot: its creation waits.
      await holder.query("BEGIN; INSERT INTO items VALUES (2, 'two')");
      client.send(
        encodeQuery({ sql: "CREATE_REPLICATION_SLOT geo_waiting_slot TEMPORARY LOGICAL pgoutput" }),
      );
      await until(
        `SELECT count(*) FROM pg_stat_activity WHERE pid = ${client.processId} AND wait_event_type = 'Lock'`,
        (rows) => rows[0]?.[0] === "1",
      );
      await new Promise<void>((resolve, reject) => {
        const socket = connect(proxy.port, "127.0.0.1", () =>
          socket.end(encodeCancelRequest({ processId: client.processId, secretKey: client.secretKey })),
        );
        socket.on("close", () => resolve());
        socket.on("error", reject);
      });
      const answer = await client.collect();
      expect(answer.error?.code).toBe("57014");
      expect(answer.status).toBe("I");
    } finally {
      await holder.query("ROLLBACK");
      await holder.close();
      await client.close();
    }
  });

  it("passes on the server's own refusal of a role without REPLICATION", async () => {
    const refusal = async (target: Target) => {
      try {
        await replicationClient(target, "database", "app_user");
        return "connected";
      } catch (error) {
        return error instanceof PgError ? [error.code, error.severity] : String(error);
      }
    };
    const straight = await refusal("direct");
    expect(straight).toEqual(["42501", "FATAL"]);
    expect(await refusal("proxy")).toEqual(straight);
  });
});
