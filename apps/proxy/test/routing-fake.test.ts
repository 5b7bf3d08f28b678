import { encodeCancelRequest, encodeQuery, encodeStartupMessage } from "@geo/proto";
import { RawClient } from "@geo/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeRegions, REGIONS, type RegionName, startFakeRegions } from "./support/fake-regions.js";
import { WireClient } from "./support/wire.js";

const usersRow = (_sql: string, _params: unknown, ctx: { text(i: number): string | null }) => ({
  columns: ["tenant_id", "name"],
  rows: [[ctx.text(0) ?? "?", "someone"]],
});

let regions: FakeRegions;

beforeAll(async () => {
  const options = {
    unknownStatements: "empty" as const,
    rules: [
      { match: /tenant_id = \$1/i, reply: usersRow },
      { match: /and stall/i, reply: { stall: true } },
      { match: /and broken/i, reply: { columns: ["n"], rows: [[1], [2], [3]], closeAfterRows: 1 } },
    ],
  };
  regions = await startFakeRegions({ "eu-west": options, "us-east": options, "ap-south": options });
});
afterAll(() => regions.close());

function ranIn(sql: RegExp): RegionName[] {
  return REGIONS.filter((region) => regions.fakes[region].statements.some((s) => sql.test(s.sql)));
}

async function raw(): Promise<RawClient> {
  return RawClient.connect({ host: "127.0.0.1", port: regions.proxy.port, user: "app", timeoutMs: 5000 });
}

describe("routing one statement", () => {
  it("sends a keyed read to the region that holds the key, and only there", async () => {
    const client = await raw();
    const result = await client.query("SELECT name FROM users WHERE tenant_id = 'bob' /* r1 */");
    expect(result.error).toBeUndefined();
    expect(result.status).toBe("I");
    expect(ranIn(/r1/)).toEqual(["us-east"]);
    await client.close();
  });

  it("refuses row locks that span regions with 0A000 and a hint, and stays usable", async () => {
    const client = await raw();
    const result = await client.query("SELECT name FROM users FOR UPDATE /* lock1 */");
    expect(result.error?.code).toBe("0A000");
    expect(result.error?.hint).toBeTruthy();
    expect(ranIn(/lock1/)).toEqual([]);
    expect(result.status).toBe("I");
    expect((await client.query("SELECT 1")).rows).toEqual([["1"]]);
    await client.close();
  });

  it("refuses COPY FROM a server file with 0A000 and a hint", async () => {
    const client = await raw();
    const result = await client.query("COPY users FROM '/tmp/users.tsv'");
    expect(result.error?.code).toBe("0A000");
    expect(result.error?.hint).toBeTruthy();
    await client.close();
  });

  it("answers a syntax error with 42601 without asking a backend", async () => {
    const client = await raw();
    const result = await client.query("SELEC oops");
    expect(result.error?.code).toBe("42601");
    expect(result.status).toBe("I");
    await client.close();
  });

  it("answers SHOW REGIONS from the console over the same connection", async () => {
    const client = await raw();
    const result = await client.query("SHOW REGIONS");
    const region = result.columns.indexOf("region");
    expect(region).toBeGreaterThanOrEqual(0);
    expect(result.rows.map((row) => row[region]).sort()).toEqual(["ap-south", "eu-west", "us-east"]);
    await client.close();
  });

  it("routes a named prepared statement at Bind by its bound value (node-postgres)", async () => {
    const client = new pg.Client({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "app",
      database: "shop",
    });
    await client.connect();
    try {
      const text = "SELECT tenant_id, name FROM users WHERE tenant_id = $1 /* r2 */";
      const a = await client.query({ name: "by-tenant", text, values: ["chandra"] });
      const b = await client.query({ name: "by-tenant", text, values: ["bob"] });
      expect(a.rows).toEqual([{ tenant_id: "chandra", name: "someone" }]);
      expect(b.rows).toEqual([{ tenant_id: "bob", name: "someone" }]);
      expect(ranIn(/r2/).sort()).toEqual(["ap-south", "us-east"]);
    } finally {
      await client.end();
    }
  });

  it("routes an unnamed statement by its bound value (node-postgres)", async () => {
    const client = new pg.Client({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "app",
      database: "shop",
    });
    await client.connect();
    try {
      const result = await client.query("SELECT tenant_id, name FROM users WHERE tenant_id = $1 /* r3 */", [
        "alice",
      ]);
      expect(result.rows).toEqual([{ tenant_id: "alice", name: "someone" }]);
      expect(ranIn(/r3/)).toEqual(["eu-west"]);
    } finally {
      await client.end();
    }
  });
});

describe("transactions", () => {
  it("reads and writes a second region inside a transaction, and ROLLBACK ends both", async () => {
    const client = await raw();
    expect((await client.query("BEGIN")).status).toBe("T");
    expect((await client.query("UPDATE users SET name = 'b' WHERE tenant_id = 'bob'")).status).toBe("T");
    const read = await client.query("SELECT name FROM users WHERE tenant_id = 'alice' /* r4 */");
    expect(read.error).toBeUndefined();
    expect(ranIn(/r4/)).toEqual(["eu-west"]);
    const write = await client.query("UPDATE users SET name = 'a' WHERE tenant_id = 'alice' /* w5 */");
    expect(write.error).toBeUndefined();
    expect(write.status).toBe("T");
    expect(ranIn(/w5/)).toEqual(["eu-west"]);
    const rollback = await client.query("ROLLBACK");
    expect(rollback.tags).toEqual(["ROLLBACK"]);
    expect(rollback.status).toBe("I");
    await client.close();
  });

  it("replays the client's BEGIN in each region the transaction reaches", async () => {
    const client = await raw();
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
    await client.query("SELECT 1 FROM users WHERE tenant_id = 'chandra' /* r5 */");
    const commit = await client.query("COMMIT");
    expect(commit.tags).toEqual(["COMMIT"]);
    expect(commit.status).toBe("I");
    const apSouth = regions.fakes["ap-south"].statements.map((s) => s.sql);
    const at = apSouth.findIndex((sql) => /r5/.test(sql));
    expect(apSouth.slice(0, at).some((sql) => /BEGIN ISOLATION LEVEL REPEATABLE READ/i.test(sql))).toBe(true);
    await client.close();
  });
});

describe("failures", () => {
  it("answers 08006 when the backend connection breaks mid-result, and the session stays usable", async () => {
    const client = await raw();
    const broken = await client.query("SELECT n FROM users WHERE tenant_id = 'bob' AND broken");
    expect(broken.error?.code).toBe("08006");
    expect(broken.status).toBe("I");
    expect((await client.query("SELECT name FROM users WHERE tenant_id = 'bob'")).error).toBeUndefined();
    await client.close();
  });

  it("cancels the statement a client runs when it sends a CancelRequest with the proxy's key", async () => {
    const client = await WireClient.connect(regions.proxy.port);
    client.send(encodeStartupMessage({ parameters: { user: "app" } }));
    const login = await client.untilReady();
    const key = login.find((m) => m.type === "BackendKeyData") as { processId: number; secretKey: Buffer };
    client.send(encodeQuery({ sql: "SELECT 1 FROM users WHERE tenant_id = 'bob' AND stall" }));
    await regions.fakes["us-east"].received(/and stall/i, 5000);
    const canceller = await WireClient.connect(regions.proxy.port);
    canceller.send(encodeCancelRequest({ processId: key.processId, secretKey: key.secretKey }));
    const answer = await client.untilReady();
    expect(answer.find((m) => m.type === "ErrorResponse")).toMatchObject({ fields: { code: "57014" } });
    expect(answer.at(-1)).toEqual({ type: "ReadyForQuery", status: "I" });
    client.close();
  });

  it("answers a client that cannot get a connection with an error naming the pool, not a hang", async () => {
    const empty = { unknownStatements: "empty" as const };
    const small = await startFakeRegions({
      "eu-west": empty,
      "us-east": empty,
      "ap-south": empty,
      extraToml: "\n[pool]\nmax = 1\ncheckout_timeout_ms = 300\n",
    });
    try {
      const holder = await RawClient.connect({ host: "127.0.0.1", port: small.proxy.port, user: "app" });
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM users WHERE tenant_id = 'alice'");
      const waiter = await RawClient.connect({ host: "127.0.0.1", port: small.proxy.port, user: "app" });
      const started = Date.now();
      const refused = await waiter.query("SELECT 1 FROM users WHERE tenant_id = 'dmitri'");
      expect(["57014", "53300"]).toContain(refused.error?.code);
      expect(refused.error?.message).toContain("127.0.0.1");
      expect(Date.now() - started).toBeLessThan(3000);
      await holder.query("COMMIT");
      expect((await waiter.query("SELECT 1 FROM users WHERE tenant_id = 'dmitri'")).error).toBeUndefined();
      await holder.close();
      await waiter.close();
    } finally {
      await small.close();
    }
  });
});
