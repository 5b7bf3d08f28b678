import { createHash } from "node:crypto";
import { connect } from "node:net";
import { MemoryDirectory, parseConfig } from "@geo/core";
import { encodeCancelRequest, encodeQuery } from "@geo/proto";
import { type PgCluster, startCluster } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { ByteClient } from "./support/byte-client.js";
import { oneRegionToml } from "./support/one-region.js";

// The fast lane (src/session/fast-lane.ts) against the general path: one PostgreSQL server, two
// proxies in front of it, one with `fast_lane = false`. Every statement goes through both and
// the bytes each client receives are compared whole. Each statement is also checked to take the
// lane, or not, on the proxy that has it (its counter moves by one, or stays).

const INIT_SQL = `
CREATE TABLE items (id int PRIMARY KEY, name text);
INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 50) AS g;
CREATE TABLE big (id int, body text);
INSERT INTO big VALUES (1, repeat('b', 200000)), (2, repeat('c', 70000));
`;

let cluster: PgCluster;
let lane: RunningProxy;
let general: RunningProxy;

async function proxyWith(node: string, fastLane: boolean): Promise<RunningProxy> {
  const server = cluster.servers[0]!;
  return startProxy({
    config: parseConfig(
      oneRegionToml(server.port, "\n[pool]\nmax = 4\n", `node = "${node}"\nfast_lane = ${fastLane}`),
      `${node}.toml`,
    ),
    directory: new MemoryDirectory(),
    logLevel: (process.env["GEO_LOG"] as "silent" | undefined) ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
  });
}

beforeAll(async () => {
  cluster = await startCluster({ count: 1, initSql: INIT_SQL });
  lane = await proxyWith("lane", true);
  general = await proxyWith("general", false);
});

afterAll(async () => {
  await lane?.close({ timeoutMs: 200 });
  await general?.close({ timeoutMs: 200 });
  await cluster?.stop();
});

const laneCount = (): number => lane.runtime.fastLane.statements;

/** A CancelRequest on a connection of its own, as a driver sends one; resolves once the proxy closed it. */
function sendCancel(port: number, processId: number, secretKey: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () =>
      socket.end(encodeCancelRequest({ processId, secretKey })),
    );
    socket.on("close", () => resolve());
    socket.on("error", reject);
  });
}

interface Pair {
  readonly lane: ByteClient;
  readonly general: ByteClient;
  close(): void;
}

/** A client to each proxy, each past a first statement (a fresh connection gets the session's settings). */
async function pair(parameters: Record<string, string> = {}): Promise<Pair> {
  const clients = {
    lane: await ByteClient.connect(lane.port, parameters),
    general: await ByteClient.connect(general.port, parameters),
  };
  await clients.lane.query("SELECT 1");
  await clients.general.query("SELECT 1");
  return {
    ...clients,
    close() {
      clients.lane.close();
      clients.general.close();
    },
  };
}

/** The statement through both proxies: its bytes on each, and whether the lane proxy took the lane. */
async function both(clients: Pair, sql: string): Promise<{ lane: Buffer; general: Buffer; took: boolean }> {
  const before = laneCount();
  const onLane = await clients.lane.query(sql);
  const took = laneCount() > before;
  return { lane: onLane, general: await clients.general.query(sql), took };
}

/**
 * Each statement through both proxies, in order: the bytes must be the same, and the lane taken
 * or not as said (undefined: either is right, only the bytes count).
 */
async function expectSame(
  clients: Pair,
  statements: readonly (readonly [string, boolean | undefined])[],
): Promise<void> {
  for (const [sql, expected] of statements) {
    const answer = await both(clients, sql);
    expect({ sql, bytes: answer.lane.toString("base64") }).toEqual({
      sql,
      bytes: answer.general.toString("base64"),
    });
    if (expected !== undefined) expect({ sql, took: answer.took }).toEqual({ sql, took: expected });
  }
}

/** Statements and whether the lane carries them (undefined: either is right, only the bytes count). */
const STATEMENTS: readonly (readonly [string, boolean | undefined])[] = [
  ["SELECT 1", true],
  ["select 1 ;  ", true],
  ["SELECT id, name FROM items ORDER BY id", true],
  ["SELECT * FROM items WHERE id = -1", true],
  ["SELECT 1/0", true],
  ["SELECT 'after an error'", true],
  ["SELECT * FROM no_such_table", true],
  ["SELECT to_tsquery('english', 'the')", true],
  ["SELECT body FROM big ORDER BY id", true],
  ["SELECT length(body) FROM big WHERE id = 2", true],
  ["SELECT g, repeat('y', 100) FROM generate_series(1, 20000) AS g", true],
  ["SELECT current_setting('application_name'), current_setting('search_path')", true],
  ["SELECT NULL::int AS nothing, 'é'::text AS accent, '\\x00ff'::bytea AS bytes", true],
  ["", false],
  ["   ", false],
  ["SELECT 1; SELECT 2", false],
  ["SELEC 1", false],
  ["SELECT random() < 2", false],
  ["SELECT $1", false],
  ["/* geo: primary */ SELECT 1", false],
  ["SHOW application_name", false],
  ["SELECT count(*) FROM items FOR UPDATE", false],
  ["VALUES (1, 'one'), (2, 'two')", undefined],
  ["SELECT 'done'", true],
];

describe("the fast lane, against the general path", () => {
  it("answers every statement with the same bytes, and takes the lane exactly for plain reads", async () => {
    const clients = await pair();
    try {
      await expectSame(clients, STATEMENTS);
      expect(general.runtime.fastLane.statements).toBe(0);
    } finally {
      clients.close();
    }
  });

  it("keeps a block's statements off the lane, and takes it again once the block ended", async () => {
    const clients = await pair();
    try {
      await expectSame(clients, [
        ["BEGIN", false],
        ["SELECT id FROM items WHERE id < 4", false],
        ["SELECT 1/0", false],
        ["SELECT 1", false],
        ["ROLLBACK", false],
        ["SELECT id FROM items WHERE id < 4", true],
        ["START TRANSACTION READ ONLY", false],
        ["SELECT 2", false],
        ["COMMIT", false],
        ["SELECT 3", true],
      ] as const);
    } finally {
      clients.close();
    }
  });

  it("keeps a pinned session off the lane until nothing pins it", async () => {
    const clients = await pair();
    try {
      await expectSame(clients, [
        ["LISTEN lane_channel", false],
        ["SELECT 1", false],
        ["UNLISTEN *", false],
        // The pinned connection went back to be reset: the next read replays the settings elsewhere.
        ["SELECT 2", undefined],
        ["SELECT 3", true],
        ["CREATE TEMP TABLE scratch (a int)", false],
        ["SELECT count(*) FROM items", false],
        ["DISCARD ALL", false],
        ["SELECT count(*) FROM items", undefined],
        ["SELECT count(*) FROM items", true],
      ] as const);
    } finally {
      clients.close();
    }
  });

  it("carries a session's settings: a statement after SET reads them, on the lane once its connection holds them", async () => {
    const clients = await pair({ application_name: "lane-test" });
    try {
      await expectSame(
        clients,
        [
          "SET search_path TO public",
          "SELECT current_setting('search_path'), current_setting('application_name')",
          "SET application_name TO 'renamed'",
          "SELECT current_setting('application_name')",
          "RESET application_name",
          "SELECT current_setting('application_name')",
        ].map((sql) => [sql, undefined] as const),
      );
      // The settings' connection came straight back from the pool: the last read took the lane.
      const before = laneCount();
      await clients.lane.query("SELECT current_setting('application_name')");
      expect(laneCount()).toBe(before + 1);
    } finally {
      clients.close();
    }
  });

  it("handles the client's next message only once the lane's statement is answered", async () => {
    const clients = await pair();
    try {
      // Two Queries in one write: the first takes the lane, the second waits its turn.
      const bytes = Buffer.concat([
        encodeQuery({ sql: "SELECT g FROM generate_series(1, 3000) AS g" }),
        encodeQuery({ sql: "SELECT 'second'" }),
      ]);
      const before = laneCount();
      const onLane = await clients.lane.exchange(bytes, 2);
      expect(laneCount()).toBeGreaterThan(before);
      expect(onLane.toString("base64")).toBe((await clients.general.exchange(bytes, 2)).toString("base64"));
    } finally {
      clients.close();
    }
  });

  it("holds the backend while the client does not read a large answer, and sends it all the same", async () => {
    const clients = await pair();
    const sql = "SELECT g, repeat('z', 1000) FROM generate_series(1, 20000) AS g";
    const digests: string[] = [];
    try {
      for (const client of [clients.lane, clients.general]) {
        const before = laneCount();
        client.send(sql);
        // About 20 MB: far past the sockets' buffers while the client is not reading.
        client.holdReading(400);
        const answer = await client.answer(30_000);
        if (client === clients.lane) expect(laneCount()).toBe(before + 1);
        expect(answer.length).toBeGreaterThan(20_000_000);
        digests.push(createHash("sha256").update(answer).digest("hex"));
        // The connection went back at rest: the next statement is answered as usual.
        expect((await client.query("SELECT 'next'")).toString("latin1")).toContain("next");
      }
      expect(digests[0]).toBe(digests[1]);
    } finally {
      clients.close();
    }
  });

  it("sends a cancel to the lane statement's backend, as the general path does", async () => {
    const answers: Buffer[] = [];
    for (const proxy of [lane, general]) {
      const client = await ByteClient.connect(proxy.port);
      try {
        await client.query("SELECT 1");
        const before = laneCount();
        client.send("SELECT count(*) FROM generate_series(1, 2000000000)");
        await new Promise((resolve) => setTimeout(resolve, 300));
        if (proxy === lane) expect(laneCount()).toBe(before + 1);
        await sendCancel(proxy.port, client.processId, client.secretKey);
        answers.push(await client.answer());
        // The session stays usable; the cancelled connection was closed, not pooled.
        answers.push(await client.query("SELECT 'after the cancel'"));
      } finally {
        client.close();
      }
    }
    expect(answers[0]!.toString("latin1")).toContain("57014");
    expect(answers[0]!.toString("base64")).toBe(answers[2]!.toString("base64"));
    expect(answers[1]!.toString("base64")).toBe(answers[3]!.toString("base64"));
  });

  it("relays the server's FATAL when the lane statement's backend is terminated, then ends the client's connection", async () => {
    const server = cluster.servers[0]!;
    const admin = new pg.Client({
      host: server.host,
      port: server.port,
      user: "postgres",
      database: "postgres",
    });
    await admin.connect();
    const answers: Buffer[] = [];
    try {
      for (const proxy of [lane, general]) {
        const client = await ByteClient.connect(proxy.port);
        await client.query("SELECT 1");
        const text = `SELECT count(*) FROM generate_series(1, 2000000000) /* terminated ${proxy === lane} */`;
        const before = laneCount();
        client.send(text);
        let killed = 0;
        for (let i = 0; i < 100 && killed === 0; i++) {
          await new Promise((resolve) => setTimeout(resolve, 30));
          const result = await admin.query(
            "SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1) AS t",
            [text],
          );
          killed = result.rows[0].n;
        }
        expect(killed).toBe(1);
        if (proxy === lane) expect(laneCount()).toBe(before + 1);
        answers.push(await client.answer());
        expect(client.closed).toBe(true);
        client.close();
      }
    } finally {
      await admin.end();
    }
    expect(answers[0]!.toString("latin1")).toContain("57P01");
    expect(answers[0]!.toString("base64")).toBe(answers[1]!.toString("base64"));
  });

  it("stops the lane statement's backend when the client leaves mid-statement", async () => {
    const server = cluster.servers[0]!;
    const admin = new pg.Client({
      host: server.host,
      port: server.port,
      user: "postgres",
      database: "postgres",
    });
    await admin.connect();
    try {
      const client = await ByteClient.connect(lane.port);
      await client.query("SELECT 1");
      const text = "SELECT count(*) FROM generate_series(1, 2000000000) /* left */";
      const before = laneCount();
      client.send(text);
      const running = async (): Promise<number> =>
        (
          await admin.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1 AND state = 'active'",
            [text],
          )
        ).rows[0].n;
      for (let i = 0; i < 100 && (await running()) === 0; i++) await new Promise((r) => setTimeout(r, 30));
      expect(laneCount()).toBe(before + 1);
      client.close();
      let left = 1;
      for (let i = 0; i < 100 && left > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 30));
        left = await running();
      }
      expect(left).toBe(0);
    } finally {
      await admin.end();
    }
  });
});
