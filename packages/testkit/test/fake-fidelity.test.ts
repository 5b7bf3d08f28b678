import { encodeBind, encodeDescribe, encodeExecute, encodeParse, encodeSync } from "@geo/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeBackend, type PgCluster, RawClient, startCluster } from "../src/index.js";

/**
 * The same behaviours checked against a real PostgreSQL and against the fake, so the fake stays
 * honest about the parts other packages rely on (transaction status, 2PC, extended protocol).
 */
interface Target {
  host: string;
  port: number;
  stop(): Promise<void>;
}

const seriesSql = "SELECT n FROM generate_series(1, 3) AS n";
/** Fails at execution: a constant 1/0 would already fail at Bind, where PostgreSQL plans it. */
const runtimeFailure = "SELECT 1/(random() * 0)::int";

async function realTarget(): Promise<Target> {
  const cluster: PgCluster = await startCluster();
  const server = cluster.servers[0]!;
  return { host: server.host, port: server.port, stop: () => cluster.stop() };
}

async function fakeTarget(): Promise<Target> {
  const fake = await FakeBackend.start({
    rules: [
      { match: "SELECT 1/0", reply: { error: { code: "22012", message: "division by zero" } } },
      { match: runtimeFailure, reply: { error: { code: "22012", message: "division by zero" } } },
      { match: seriesSql, reply: { columns: [{ name: "n", typeOid: 23 }], rows: [[1], [2], [3]] } },
    ],
  });
  return { host: fake.host, port: fake.port, stop: () => fake.close() };
}

describe.each([
  ["real PostgreSQL", realTarget],
  ["the fake backend", fakeTarget],
])("protocol behaviour of %s", (_name, start) => {
  let target: Target;
  let client: RawClient;

  beforeAll(async () => {
    target = await start();
    client = await RawClient.connect({
      host: target.host,
      port: target.port,
      user: "postgres",
      database: "postgres",
    });
  });

  afterAll(async () => {
    await client.close();
    await target.stop();
  });

  it("fails statements in an aborted block with 25P02 and turns COMMIT into ROLLBACK", async () => {
    expect((await client.query("BEGIN")).status).toBe("T");
    const failed = await client.query("SELECT 1/0");
    expect(failed.error?.code).toBe("22012");
    expect(failed.status).toBe("E");
    expect((await client.query("SELECT 1")).error?.code).toBe("25P02");
    const commit = await client.query("COMMIT");
    expect(commit.tags).toEqual(["ROLLBACK"]);
    expect(commit.status).toBe("I");
  });

  it("rolls back instead of preparing an aborted block", async () => {
    await client.query("BEGIN");
    await client.query("SELECT 1/0");
    const prepared = await client.query("PREPARE TRANSACTION 'geo_aborted'");
    expect(prepared).toMatchObject({ tags: ["ROLLBACK"], status: "I" });
    expect((await client.query("select gid from pg_prepared_xacts")).rows).toEqual([]);
  });

  it("stops a multi-statement query at the first error and skips the rest", async () => {
    const result = await client.query("SELECT 1; SELECT 1/0; SELECT 1");
    expect(result.tags).toEqual(["SELECT 1"]);
    expect(result.error?.code).toBe("22012");
    expect(result.status).toBe("I");
  });

  it("discards extended messages after an error until Sync", async () => {
    client.send(
      Buffer.concat([
        encodeParse({ name: "", sql: runtimeFailure, paramTypes: [] }),
        encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeParse({ name: "", sql: "SELECT 1", paramTypes: [] }),
        encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    const types: string[] = [];
    for (;;) {
      const message = await client.next();
      types.push(message.type);
      if (message.type === "ReadyForQuery") break;
    }
    expect(types).toEqual(["ParseComplete", "BindComplete", "ErrorResponse", "ReadyForQuery"]);
  });

  it("prepares, lists and commits a transaction, and refuses unknown or duplicate gids", async () => {
    await client.query("BEGIN");
    const prepared = await client.query("PREPARE TRANSACTION 'geo_fidelity'");
    expect(prepared).toMatchObject({ tags: ["PREPARE TRANSACTION"], status: "I" });
    expect((await client.query("select gid from pg_prepared_xacts")).rows).toEqual([["geo_fidelity"]]);
    await client.query("BEGIN");
    expect((await client.query("PREPARE TRANSACTION 'geo_fidelity'")).error?.code).toBe("42710");
    await client.query("BEGIN");
    expect((await client.query("COMMIT PREPARED 'geo_fidelity'")).error?.code).toBe("25001");
    await client.query("ROLLBACK");
    expect((await client.query("COMMIT PREPARED 'geo_fidelity'")).tags).toEqual(["COMMIT PREPARED"]);
    expect((await client.query("ROLLBACK PREPARED 'geo_fidelity'")).error?.code).toBe("42704");
  });

  it("grants a session advisory lock to one session at a time and releases it when that session ends", async () => {
    const connect = () =>
      RawClient.connect({ host: target.host, port: target.port, user: "postgres", database: "postgres" });
    const take =
      "SELECT pg_catalog.pg_try_advisory_lock(-7263011845) AS k0, pg_catalog.pg_try_advisory_lock(42) AS k1";
    const mine =
      "SELECT count(*) AS held FROM pg_catalog.pg_locks l WHERE l.locktype = 'advisory' AND l.granted" +
      " AND l.objsubid = 1 AND l.pid = pg_catalog.pg_backend_pid() AND (l.objid = 42 OR l.classid = 4294967294)";
    const first = await connect();
    const second = await connect();
    try {
      expect((await first.query(take)).rows).toEqual([["t", "t"]]);
      expect((await first.query(mine)).rows).toEqual([["2"]]);
      expect((await second.query(take)).rows).toEqual([["f", "f"]]);
      expect((await second.query(mine)).rows).toEqual([["0"]]);
      await first.close();
      let again = (await second.query(take)).rows;
      // The server ends the session a moment after its socket closes.
      while (again[0]?.[0] !== "t") again = (await second.query(take)).rows;
      expect(again).toEqual([["t", "t"]]);
    } finally {
      await first.close().catch(() => undefined);
      await second.close();
    }
  });

  it("grants a shared advisory lock to several sessions, never beside another session's exclusive one", async () => {
    const connect = () =>
      RawClient.connect({ host: target.host, port: target.port, user: "postgres", database: "postgres" });
    const shared = "SELECT pg_catalog.pg_try_advisory_lock_shared(77) AS k0";
    const exclusive = "SELECT pg_catalog.pg_try_advisory_lock(77) AS k0";
    const [a, b, c] = [await connect(), await connect(), await connect()];
    try {
      expect((await a.query(shared)).rows).toEqual([["t"]]);
      expect((await b.query(shared)).rows).toEqual([["t"]]);
      expect((await c.query(exclusive)).rows).toEqual([["f"]]);
      await a.close();
      await b.close();
      let taken = (await c.query(exclusive)).rows;
      // The server ends the sessions a moment after their sockets close.
      while (taken[0]?.[0] !== "t") taken = (await c.query(exclusive)).rows;
      const d = await connect();
      try {
        expect((await d.query(shared)).rows).toEqual([["f"]]);
      } finally {
        await d.close();
      }
    } finally {
      for (const client of [a, b, c]) await client.close().catch(() => undefined);
    }
  });

  it("suspends a portal at the row limit and counts only the last Execute's rows in its tag", async () => {
    client.send(
      Buffer.concat([
        encodeParse({ name: "", sql: seriesSql, paramTypes: [] }),
        encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
        encodeDescribe({ target: "P", name: "" }),
        encodeExecute({ portal: "", maxRows: 2 }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    const types: string[] = [];
    for (;;) {
      const message = await client.next();
      types.push(message.type === "CommandComplete" ? `CommandComplete ${message.tag}` : message.type);
      if (message.type === "ReadyForQuery") break;
    }
    expect(types).toEqual([
      "ParseComplete",
      "BindComplete",
      "RowDescription",
      "DataRow",
      "DataRow",
      "PortalSuspended",
      "DataRow",
      "CommandComplete SELECT 1",
      "ReadyForQuery",
    ]);
  });

  it("reports a changed application_name with ParameterStatus", async () => {
    await client.query("SET application_name = 'fidelity'");
    expect(client.parameters["application_name"]).toBe("fidelity");
    expect((await client.query("SHOW application_name")).rows).toEqual([["fidelity"]]);
  });
});
