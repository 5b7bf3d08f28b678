import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  BackendCode,
  deriveScramKeys,
  encodeQuery,
  type Frame,
  type PgError,
  parseScramVerifier,
} from "@geo/proto";
import { type PgCluster, type PgServer, startCluster } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackendConnection, type ConnectOptions } from "../src/index.js";
import { rolesHba, rolesInitSql } from "./roles.js";

let cluster: PgCluster;
let server: PgServer;
const open: BackendConnection[] = [];

beforeAll(async () => {
  cluster = await startCluster({ count: 1, hba: rolesHba, initSql: rolesInitSql });
  server = cluster.servers[0]!;
});

afterAll(async () => {
  for (const connection of open) connection.destroy();
  await cluster?.stop();
});

function options(overrides: Partial<ConnectOptions> = {}): ConnectOptions {
  return {
    host: server.host,
    port: server.port,
    database: "postgres",
    user: "postgres",
    connectTimeoutMs: 5_000,
    ...overrides,
  };
}

async function connect(overrides: Partial<ConnectOptions> = {}): Promise<BackendConnection> {
  const connection = await BackendConnection.connect(options(overrides));
  open.push(connection);
  return connection;
}

/** Sends one simple Query through the relay path and returns copies of the frames until ReadyForQuery. */
function relay(connection: BackendConnection, sql: string): Promise<Frame[]> {
  return new Promise((resolve, reject) => {
    const frames: Frame[] = [];
    connection.setReceiver({
      onFrame(frame) {
        frames.push({
          code: frame.code,
          payload: Buffer.from(frame.payload),
          bytes: Buffer.from(frame.bytes),
        });
        if (frame.code === BackendCode.ReadyForQuery) {
          connection.setReceiver(null);
          resolve(frames);
        }
      },
      onBroken: reject,
    });
    connection.write(encodeQuery({ sql }));
  });
}

describe("BackendConnection against real PostgreSQL", () => {
  it("logs in with trust and records parameters, the cancel key and an idle status", async () => {
    const connection = await connect({ applicationName: "pool-test" });
    expect(connection.usable).toBe(true);
    expect(connection.parameters.get("server_version")).toMatch(/^\d+/);
    expect(connection.parameters.get("client_encoding")).toBe("UTF8");
    expect(connection.parameters.get("application_name")).toBe("pool-test");
    expect(connection.processId).toBeGreaterThan(0);
    expect(connection.secretKey.length).toBe(4);
    expect(connection.txStatus).toBe("I");
  });

  it("passes extra startup parameters to the server", async () => {
    const connection = await connect({ startupParams: { TimeZone: "Asia/Tokyo" } });
    expect(connection.parameters.get("TimeZone")).toBe("Asia/Tokyo");
  });

  it("logs in a SCRAM-SHA-256 role with its password", async () => {
    const connection = await connect({ user: "scram_user", password: "scram-secret" });
    const { rows } = await connection.simpleQuery("SELECT current_user");
    expect(rows).toEqual([["scram_user"]]);
  });

  it("logs in a SCRAM-SHA-256 role with only its ClientKey and ServerKey", async () => {
    const admin = await connect();
    const { rows } = await admin.simpleQuery(
      "SELECT rolpassword FROM pg_authid WHERE rolname = 'scram_user'",
    );
    const verifier = parseScramVerifier(rows[0]![0]!);
    expect(verifier).not.toBeNull();
    const keys = deriveScramKeys("scram-secret", verifier!.salt, verifier!.iterations);
    const connection = await connect({
      user: "scram_user",
      scramKeys: { clientKey: keys.clientKey, serverKey: keys.serverKey },
    });
    expect((await connection.simpleQuery("SELECT current_user")).rows).toEqual([["scram_user"]]);
  });

  it("refuses with 28000 a server whose SCRAM signature does not match the expected ServerKey", async () => {
    const admin = await connect();
    const { rows } = await admin.simpleQuery(
      "SELECT rolpassword FROM pg_authid WHERE rolname = 'scram_user'",
    );
    const verifier = parseScramVerifier(rows[0]![0]!)!;
    const keys = deriveScramKeys("scram-secret", verifier.salt, verifier.iterations);
    await expect(
      connect({
        user: "scram_user",
        scramKeys: { clientKey: keys.clientKey, serverKey: Buffer.alloc(32, 7) },
      }),
    ).rejects.toMatchObject({ code: "28000" });
  });

  it("logs in an MD5 role", async () => {
    const connection = await connect({ user: "md5_user", password: "md5-secret" });
    expect((await connection.simpleQuery("SELECT current_user")).rows).toEqual([["md5_user"]]);
  });

  it("logs in an MD5 role with only the hash pg_authid stores for it", async () => {
    const admin = await connect();
    const { rows } = await admin.simpleQuery("SELECT rolpassword FROM pg_authid WHERE rolname = 'md5_user'");
    const hash = rows[0]![0]!;
    expect(hash).toMatch(/^md5[0-9a-f]{32}$/);
    const connection = await connect({ user: "md5_user", md5Hash: hash });
    expect((await connection.simpleQuery("SELECT current_user")).rows).toEqual([["md5_user"]]);
  });

  it("fails with the server's 28P01 when the MD5 hash is not the role's", async () => {
    await expect(connect({ user: "md5_user", md5Hash: `md5${"0".repeat(32)}` })).rejects.toMatchObject({
      code: "28P01",
    });
  });

  it("refuses with 08001 a SCRAM or cleartext request when only an MD5 hash is held", async () => {
    const hash = `md5${"1".repeat(32)}`;
    const scram = (await connect({ user: "scram_user", md5Hash: hash }).catch((e: unknown) => e)) as PgError;
    expect(scram.code).toBe("08001");
    expect(scram.message).toMatch(/SCRAM-SHA-256 .*cannot be answered from the role's MD5 hash/);
    const clear = (await connect({ user: "clear_user", md5Hash: hash }).catch((e: unknown) => e)) as PgError;
    expect(clear.code).toBe("08001");
    expect(clear.message).toMatch(/MD5 hash/);
  });

  it("logs in a role that asks for a cleartext password", async () => {
    const connection = await connect({ user: "clear_user", password: "clear-secret" });
    expect((await connection.simpleQuery("SELECT current_user")).rows).toEqual([["clear_user"]]);
  });

  it("fails with the server's 28P01 on a wrong password", async () => {
    await expect(connect({ user: "scram_user", password: "wrong" })).rejects.toMatchObject({ code: "28P01" });
  });

  it("fails with 08001 when a password is required and none is configured", async () => {
    await expect(connect({ user: "md5_user" })).rejects.toMatchObject({ code: "08001" });
  });

  it("fails with 08001 naming host:port within connectTimeoutMs when the server is frozen (SIGSTOP)", async () => {
    // A stopped postmaster leaves its port open: the kernel completes the TCP handshake and queues
    // the connection, and the StartupMessage is never answered.
    const postmaster = Number(readFileSync(join(server.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    process.kill(postmaster, "SIGSTOP");
    const started = Date.now();
    try {
      const error = (await BackendConnection.connect(options({ connectTimeoutMs: 800 })).catch(
        (e: unknown) => e,
      )) as PgError;
      const tookMs = Date.now() - started;
      console.log(`connect to a frozen server failed after ${tookMs} ms (connectTimeoutMs 800)`);
      expect(error.code).toBe("08001");
      expect(error.message).toContain(`${server.host}:${server.port}`);
      expect(tookMs).toBeGreaterThanOrEqual(700);
      expect(tookMs).toBeLessThan(5_000);
    } finally {
      process.kill(postmaster, "SIGCONT");
    }
    // Woken, it serves new connections again.
    const connection = await connect();
    expect(connection.txStatus).toBe("I");
  });

  it("fails with the server's 3D000 for a database that does not exist", async () => {
    await expect(connect({ database: "no_such_db" })).rejects.toMatchObject({ code: "3D000" });
  });

  it("runs internal statements and returns fields, text rows, NULLs and the tag", async () => {
    const connection = await connect();
    const result = await connection.simpleQuery("SELECT 1 AS one, NULL::text AS nothing, 'é' AS accent");
    expect(result).toEqual({
      fields: ["one", "nothing", "accent"],
      rows: [["1", null, "é"]],
      tag: "SELECT 1",
    });
    await expect(connection.simpleQuery("SELECT * FROM missing_table")).rejects.toMatchObject({
      code: "42P01",
    });
    expect((await connection.simpleQuery("SELECT 2")).rows).toEqual([["2"]]);
  });

  it("refuses an internal statement with 55000 while the owner's reply is in flight", async () => {
    const connection = await connect();
    const done = new Promise<void>((resolve) =>
      connection.setReceiver({
        onFrame: (frame) => {
          if (frame.code === BackendCode.ReadyForQuery) resolve();
        },
      }),
    );
    connection.write(encodeQuery({ sql: "SELECT pg_sleep(0.05)" }));
    await expect(connection.simpleQuery("SELECT 1")).rejects.toMatchObject({ code: "55000" });
    await done;
    expect((await connection.simpleQuery("SELECT 1")).rows).toEqual([["1"]]);
  });

  it("relays every backend frame of a result in order and tracks the transaction status", async () => {
    const connection = await connect();
    const frames = await relay(connection, "SELECT g FROM generate_series(1, 3) g");
    expect(frames.map((frame) => String.fromCharCode(frame.code)).join("")).toBe("TDDDCZ");
    expect(frames[1]!.bytes.subarray(0, 1).toString()).toBe("D");
    expect(frames[1]!.bytes.readInt32BE(1)).toBe(frames[1]!.bytes.length - 1);
    await relay(connection, "BEGIN");
    expect(connection.txStatus).toBe("T");
    await relay(connection, "SELECT 1/0");
    expect(connection.txStatus).toBe("E");
    await relay(connection, "ROLLBACK");
    expect(connection.txStatus).toBe("I");
    expect(connection.isQuiescent).toBe(true);
  });

  it("holds frames back while paused and delivers them all after resume", async () => {
    const connection = await connect();
    let rows = 0;
    let pausedOnce = false;
    const done = new Promise<void>((resolve) => {
      connection.setReceiver({
        onFrame(frame) {
          if (frame.code === BackendCode.DataRow) {
            rows++;
            if (!pausedOnce) {
              pausedOnce = true;
              connection.pause();
            }
          }
          if (frame.code === BackendCode.ReadyForQuery) resolve();
        },
      });
    });
    connection.write(encodeQuery({ sql: "SELECT g FROM generate_series(1, 2000) g" }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(rows).toBe(1);
    connection.resume();
    await done;
    expect(rows).toBe(2000);
  });

  it("cancels a running pg_sleep through a CancelRequest", async () => {
    const connection = await connect();
    const sleeping = connection.simpleQuery("SELECT pg_sleep(30)");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    await connection.cancel();
    await expect(sleeping).rejects.toMatchObject({ code: "57014" });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(connection.usable).toBe(true);
  });

  it("reports 08006 and calls the receiver when the server terminates the backend", async () => {
    const connection = await connect();
    const admin = await connect();
    const brokenSeen = new Promise<PgError>((resolve) => connection.onBroken(resolve));
    const receiverSeen = new Promise<PgError>((resolve) =>
      connection.setReceiver({ onFrame: () => undefined, onBroken: resolve }),
    );
    await admin.simpleQuery(`SELECT pg_terminate_backend(${connection.processId})`);
    const error = await brokenSeen;
    expect(error.code).toBe("08006");
    expect(error.message).toContain(`${server.host}:${server.port}`);
    expect((await receiverSeen).code).toBe("08006");
    expect(connection.broken).toBe(true);
    expect(() => connection.write(encodeQuery({ sql: "SELECT 1" }))).toThrowError(
      expect.objectContaining({ code: "08006" }),
    );
    await expect(connection.simpleQuery("SELECT 1")).rejects.toMatchObject({ code: "08006" });
  });

  it("closes with Terminate so the server ends the session cleanly", async () => {
    const admin = await connect();
    const connection = await connect();
    const pid = connection.processId;
    await connection.close();
    expect(connection.phase).toBe("closed");
    expect(connection.broken).toBe(false);
    let count = "1";
    for (let i = 0; i < 50 && count !== "0"; i++) {
      count = (await admin.simpleQuery(`SELECT count(*) FROM pg_stat_activity WHERE pid = ${pid}`))
        .rows[0]![0]!;
      if (count !== "0") await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(count).toBe("0");
  });
});
