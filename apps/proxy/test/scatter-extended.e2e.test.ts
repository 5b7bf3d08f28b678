import { connect } from "node:net";
import {
  type BackendMessage,
  encodeBind,
  encodeCancelRequest,
  encodeDescribe,
  encodeExecute,
  encodeParse,
  encodeSync,
} from "@geo/proto";
import { RawClient } from "@geo/testkit";
import type pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RealRegions } from "./support/real-regions.js";
import { startScatterRegions, textClient } from "./support/scatter-regions.js";

let regions: RealRegions;
let proxy: pg.Client;
let reference: pg.Client;

beforeAll(async () => {
  regions = await startScatterRegions();
  proxy = await textClient(regions.proxy.port);
  reference = await textClient(regions.cluster.servers[0]!.port, "reference");
});
afterAll(async () => {
  await proxy?.end().catch(() => undefined);
  await reference?.end().catch(() => undefined);
  await regions?.close();
});

function referencePort(): number {
  return regions.cluster.servers[0]!.port;
}

async function both(sql: string, values: unknown[]): Promise<[unknown[][], unknown[][]]> {
  const run = async (client: pg.Client) =>
    (await client.query({ text: sql, values, rowMode: "array" })).rows as unknown[][];
  return Promise.all([run(proxy), run(reference)]);
}

describe("prepared statements spanning regions", () => {
  const cases: [string, unknown[]][] = [
    [
      "SELECT tenant_id, id, qty FROM measures WHERE qty > $1 ORDER BY qty, tenant_id, id LIMIT $2 OFFSET $3",
      [-500, 6, 2],
    ],
    [
      "SELECT status, count(*), sum(total) FROM orders WHERE total > $1 GROUP BY status HAVING count(*) > $2 ORDER BY status",
      ["50.5", 3],
    ],
    [
      "SELECT $2::text AS echo, pg_typeof($2)::text AS t, count(*) FROM orders WHERE total > $1",
      ["100", 'it\'s "quoted" \\ text'],
    ],
    ["SELECT name FROM users WHERE name LIKE $1 ORDER BY name LIMIT $2", ["%-2", 5]],
    [
      "SELECT tenant_id, id, label FROM measures WHERE label = ANY($1) ORDER BY tenant_id, id",
      ["{apple,zebra}"],
    ],
  ];
  for (const [sql, values] of cases) {
    it(`answers ${sql} with ${JSON.stringify(values)} as one PostgreSQL would`, async () => {
      const [viaProxy, expected] = await both(sql, values);
      expect(viaProxy).toEqual(expected);
      expect(viaProxy.length).toBeGreaterThan(0);
    });
  }

  it("runs one named statement again with other parameters", async () => {
    for (const limit of [1, 3, 8]) {
      const query = {
        name: "top-qty",
        text: "SELECT qty FROM measures ORDER BY qty DESC NULLS LAST LIMIT $1",
        values: [limit],
        rowMode: "array" as const,
      };
      const [a, b] = await Promise.all([proxy.query(query), reference.query(query)]);
      expect(a.rows).toEqual(b.rows);
      expect(a.rows.length).toBe(limit);
    }
  });
});

describe("sort keys with a COLLATE inside them", () => {
  // The key's collation comes from inside it, which a column shipped home does not carry: such a
  // read must not be merged in the home database's default collation.
  it("answers ORDER BY upper(label COLLATE ...) in the key's own collation", async () => {
    const sql = `SELECT tenant_id, id, upper(label COLLATE "und-x-icu") AS u FROM measures WHERE label IS NOT NULL ORDER BY 3, 1, 2`;
    const [viaProxy, expected] = await both(sql, []);
    expect(viaProxy).toEqual(expected);
    expect(viaProxy.length).toBeGreaterThan(5);
  });

  it("answers ORDER BY a sub-query's max(label COLLATE ...) exactly, or refuses it within the gather bounds", async () => {
    const sql = `SELECT m.tenant_id, m.id, (SELECT max(x.label COLLATE "und-x-icu") FROM measures x WHERE x.tenant_id = m.tenant_id AND x.id = m.id) AS l FROM measures m WHERE m.label IS NOT NULL ORDER BY 3 DESC, 1, 2 LIMIT 12`;
    const viaProxy = await proxy.query({ text: sql, rowMode: "array" }).then(
      (result) => result.rows as unknown[][],
      (error: { code?: string }) => error.code,
    );
    if (Array.isArray(viaProxy)) expect(viaProxy).toEqual((await both(sql, []))[1]);
    else expect(viaProxy).toBe("53400");
  });
});

describe("binary results", () => {
  const statements = [
    "SELECT tenant_id, id, qty, small, price, score, ratio, tag, flag FROM measures ORDER BY score DESC, id, qty LIMIT 30",
    "SELECT tenant_id, id, price FROM measures ORDER BY price NULLS FIRST, id, qty LIMIT 25 OFFSET 3",
    "SELECT flag, count(*), sum(price), avg(price), max(score), avg(ratio), sum(small) FROM measures GROUP BY flag ORDER BY flag",
    "SELECT tenant_id, label, tag FROM measures ORDER BY label NULLS FIRST, tenant_id, id LIMIT 10",
    "SELECT currency, count(DISTINCT user_id), min(created_at) FROM orders GROUP BY currency ORDER BY currency",
    "SELECT tenant_id, id, rank() OVER (ORDER BY total DESC, tenant_id, id), total FROM orders ORDER BY 3 LIMIT 12",
    "SELECT string_agg(name, ',' ORDER BY name), array_agg(age ORDER BY age, name) FROM users",
    "SELECT ARRAY[status, currency::text] AS pair, count(*) FROM orders GROUP BY 1 ORDER BY 1",
    "SELECT tenant_id, created_at, total FROM orders ORDER BY created_at DESC, tenant_id, id LIMIT 9",
  ];

  /** Parse, Bind (every column binary), Describe, Execute, Sync: the whole exchange, values as bytes. */
  async function binaryExchange(port: number, database: string, sql: string): Promise<unknown[]> {
    const client = await RawClient.connect({ host: "127.0.0.1", port, user: "postgres", database });
    try {
      client.send(
        Buffer.concat([
          encodeParse({ name: "", sql, paramTypes: [] }),
          encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [1] }),
          encodeDescribe({ target: "P", name: "" }),
          encodeExecute({ portal: "", maxRows: 0 }),
          encodeSync(),
        ]),
      );
      return await exchange(client);
    } finally {
      await client.close();
    }
  }

  for (const sql of statements) {
    it(`sends ${sql} in binary, byte for byte as one PostgreSQL`, async () => {
      const [viaProxy, expected] = await Promise.all([
        binaryExchange(regions.proxy.port, "shop", sql),
        binaryExchange(referencePort(), "reference", sql),
      ]);
      expect(viaProxy).toEqual(expected);
      expect(viaProxy.length).toBeGreaterThan(5);
    });
  }
});

const FLOAT4_OID = 700;
const FLOAT8_OID = 701;

/**
 * A binary float's bytes, with NaN's sign bit cleared: PostgreSQL sends a NaN's bits as the CPU left
 * them, and x86 gives `Infinity + -Infinity` the sign bit, so which NaN a sum over NaN and both
 * infinities ends on depends on the order it added rows in, on one server as across regions.
 */
function canonicalFloat(value: Buffer, typeOid: number): Buffer {
  if (typeOid === FLOAT8_OID && value.length === 8 && Number.isNaN(value.readDoubleBE(0))) {
    return Buffer.from("7ff8000000000000", "hex");
  }
  if (typeOid === FLOAT4_OID && value.length === 4 && Number.isNaN(value.readFloatBE(0))) {
    return Buffer.from("7fc00000", "hex");
  }
  return value;
}

/** The messages of one exchange up to ReadyForQuery, as type names (DataRows as their values). */
async function exchange(client: RawClient): Promise<unknown[]> {
  const out: unknown[] = [];
  let binaryTypes: (number | undefined)[] = [];
  for (;;) {
    const message: BackendMessage = await client.next();
    switch (message.type) {
      case "DataRow":
        out.push(
          message.values.map((v, i) => {
            if (v === null) return null;
            const typeOid = binaryTypes[i];
            return (typeOid === undefined ? v : canonicalFloat(v, typeOid)).toString("hex");
          }),
        );
        break;
      case "CommandComplete":
        out.push(message.tag);
        break;
      case "RowDescription":
        binaryTypes = message.fields.map((f) => (f.format === 1 ? f.typeOid : undefined));
        out.push(message.fields.map((f) => [f.name, f.typeOid, f.typeModifier, f.format]));
        break;
      case "ErrorResponse":
        out.push(["error", message.fields.code]);
        break;
      case "ReadyForQuery":
        out.push(`ready ${message.status}`);
        return out;
      default:
        out.push(message.type);
    }
  }
}

describe("portal suspension", () => {
  const cases: [string, number[], number][] = [
    ["SELECT tenant_id, id, price FROM measures ORDER BY price, tenant_id, id LIMIT 11", [1, 0, 1], 4],
    ["SELECT currency, count(*) FROM orders GROUP BY currency ORDER BY currency", [1, 0], 1],
    ["SELECT tenant_id, id FROM measures ORDER BY id, tenant_id LIMIT 8", [0], 4],
  ];
  for (const [sql, formats, maxRows] of cases) {
    it(`answers a row-limited Execute a part at a time: ${sql}`, async () => {
      const run = async (port: number, database: string) => {
        const client = await RawClient.connect({ host: "127.0.0.1", port, user: "postgres", database });
        try {
          client.send(
            Buffer.concat([
              encodeParse({ name: "", sql, paramTypes: [] }),
              encodeBind({
                portal: "p",
                statement: "",
                paramFormats: [],
                params: [],
                resultFormats: formats as (0 | 1)[],
              }),
              encodeDescribe({ target: "P", name: "p" }),
              encodeExecute({ portal: "p", maxRows }),
              encodeExecute({ portal: "p", maxRows }),
              encodeExecute({ portal: "p", maxRows: 0 }),
              encodeSync(),
            ]),
          );
          return await exchange(client);
        } finally {
          await client.close();
        }
      };
      const [viaProxy, expected] = await Promise.all([
        run(regions.proxy.port, "shop"),
        run(referencePort(), "reference"),
      ]);
      expect(viaProxy).toEqual(expected);
      expect(viaProxy).toContain("PortalSuspended");
    });
  }
});

describe("suspended portals past the bounds", () => {
  it("answers the rest of a suspended portal up to [gather] max_rows, then refuses with the bound's error", async () => {
    const client = await RawClient.connect({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "shop",
    });
    try {
      client.send(
        Buffer.concat([
          encodeParse({
            name: "",
            sql: "SELECT o.id, g FROM orders o, generate_series(1, 3) g",
            paramTypes: [],
          }),
          encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
          encodeExecute({ portal: "", maxRows: 10 }),
          encodeExecute({ portal: "", maxRows: 0 }),
          encodeSync(),
        ]),
      );
      const messages = await exchange(client);
      const kinds = messages.map((m) => (Array.isArray(m) && m[0] !== "error" ? "row" : m));
      expect(kinds).toEqual([
        "ParseComplete",
        "BindComplete",
        ...Array.from({ length: 10 }, () => "row"),
        "PortalSuspended",
        // The rows held within the bound, then the bound's error where the rest would go on.
        ...Array.from({ length: 200 }, () => "row"),
        ["error", "53400"],
        "ready I",
      ]);
      expect((await client.query("SELECT count(*) FROM orders")).rows).toEqual([["100"]]);
    } finally {
      await client.close();
    }
  });
});

describe("errors and transactions", () => {
  it("sends the error of the one region that failed, and the session goes on", async () => {
    const sql = "SELECT id / (CASE WHEN tenant_id = 'alice' THEN 0 ELSE 1 END) FROM measures ORDER BY 1";
    const error = (await proxy.query(sql).catch((e: unknown) => e)) as { code?: string; message?: string };
    expect(error.code).toBe("22012");
    expect(error.message).toBe("division by zero");
    const again = await proxy.query("SELECT count(*) AS n FROM measures");
    expect(again.rows).toEqual([{ n: "120" }]);
  });

  it("fails the transaction block on a region's error, as PostgreSQL does", async () => {
    const client = await RawClient.connect({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "shop",
    });
    try {
      expect((await client.query("BEGIN")).status).toBe("T");
      const failed = await client.query("SELECT 1 / (qty - qty) FROM measures");
      expect(failed.error?.code).toBe("22012");
      expect(failed.status).toBe("E");
      const refused = await client.query("SELECT count(*) FROM measures");
      expect(refused.error?.code).toBe("25P02");
      const rollback = await client.query("ROLLBACK");
      expect(rollback.status).toBe("I");
      const after = await client.query("SELECT count(*) FROM measures");
      expect(after.rows).toEqual([["120"]]);
      expect(after.status).toBe("I");
    } finally {
      await client.close();
    }
  });

  it("reads the block's own uncommitted write in its region", async () => {
    const client = await RawClient.connect({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "shop",
    });
    try {
      await client.query("BEGIN");
      await client.query("UPDATE measures SET qty = 99999 WHERE tenant_id = 'bob' AND id = 1");
      const inside = await client.query("SELECT max(qty), count(*) FROM measures");
      expect(inside.rows).toEqual([["99999", "120"]]);
      expect(inside.status).toBe("T");
      const merged = await client.query(
        "SELECT tenant_id, qty FROM measures ORDER BY qty DESC NULLS LAST LIMIT 1",
      );
      expect(merged.rows).toEqual([["bob", "99999"]]);
      await client.query("ROLLBACK");
      const outside = await client.query("SELECT max(qty) FROM measures");
      expect(outside.rows).not.toEqual([["99999"]]);
    } finally {
      await client.close();
    }
  });

  it("refuses result formats that match neither one code nor every column with PostgreSQL's error", async () => {
    const sql = "SELECT tenant_id, id, qty FROM measures ORDER BY qty LIMIT 2";
    const run = async (port: number, database: string) => {
      const client = await RawClient.connect({ host: "127.0.0.1", port, user: "postgres", database });
      try {
        client.send(
          Buffer.concat([
            encodeParse({ name: "", sql, paramTypes: [] }),
            encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [1, 0] }),
            encodeExecute({ portal: "", maxRows: 0 }),
            encodeSync(),
          ]),
        );
        return await exchange(client);
      } finally {
        await client.close();
      }
    };
    const [viaProxy, expected] = await Promise.all([
      run(regions.proxy.port, "shop"),
      run(referencePort(), "reference"),
    ]);
    // PostgreSQL refuses at Bind; the proxy learns the column count when it runs the portal.
    expect(viaProxy).toEqual(["ParseComplete", "BindComplete", ["error", "08P01"], "ready I"]);
    expect(expected).toEqual(["ParseComplete", ["error", "08P01"], "ready I"]);
  });

  it("answers many statements in a row without losing a pooled connection", async () => {
    for (let i = 0; i < 30; i++) {
      const result = await proxy.query({
        text: "SELECT count(*) FROM orders WHERE total > $1",
        values: [i],
        rowMode: "array",
      });
      const expected = await reference.query({
        text: "SELECT count(*) FROM orders WHERE total > $1",
        values: [i],
        rowMode: "array",
      });
      expect(result.rows).toEqual(expected.rows);
    }
  });

  it("stops every region of a scatter on a CancelRequest, and the session goes on", async () => {
    const client = await RawClient.connect({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "shop",
    });
    try {
      const started = Date.now();
      const running = client.query("SELECT count(*) FROM measures WHERE pg_sleep(0.2) IS NOT NULL");
      await new Promise((resolve) => setTimeout(resolve, 400));
      await new Promise<void>((resolve, reject) => {
        const socket = connect(regions.proxy.port, "127.0.0.1", () => {
          socket.end(encodeCancelRequest({ processId: client.processId, secretKey: client.secretKey }));
        });
        socket.on("close", () => resolve());
        socket.on("error", reject);
      });
      const cancelled = await running;
      expect(cancelled.error?.code).toBe("57014");
      expect(cancelled.status).toBe("I");
      expect(Date.now() - started).toBeLessThan(5000);
      const after = await client.query("SELECT count(*) FROM measures");
      expect(after.rows).toEqual([["120"]]);
    } finally {
      await client.close();
    }
  });

  it("stops every region of a scatter whose client vanished, and another client gets its own answer", async () => {
    const client = await RawClient.connect({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "shop",
    });
    const marker = "SELECT count(*) FROM measures WHERE pg_sleep(0.5) IS NOT NULL";
    void client.query(marker).catch(() => undefined);
    const running = async (): Promise<number> => {
      let total = 0;
      for (const direct of Object.values(regions.direct)) {
        const found = await direct.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%pg_sleep(0.5)%' AND state = 'active' AND pid <> pg_backend_pid()",
        );
        total += found.rows[0].n as number;
      }
      return total;
    };
    for (let i = 0; i < 100 && (await running()) < 3; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await running()).toBe(3);
    // The client leaves while its statement runs (Terminate queued behind it, then the socket closes).
    await client.close();
    const started = Date.now();
    while ((await running()) > 0 && Date.now() - started < 5_000) await new Promise((r) => setTimeout(r, 50));
    // Without the cancel every region would run on for about a minute (120 rows x 0.5 s / 3 regions).
    expect(await running()).toBe(0);
    const after = await proxy.query("SELECT count(*) FROM measures");
    expect(after.rows).toEqual([{ count: "120" }]);
  });

  it("fails with an error naming the region when a region is down, never a partial answer", async () => {
    await regions.cluster.stopServer(2);
    try {
      const error = (await proxy.query("SELECT count(*) FROM measures").catch((e: unknown) => e)) as {
        code?: string;
        message?: string;
      };
      expect(["08006", "57P01"]).toContain(error.code);
      expect(error.message).toContain("ap-south");
      const single = await proxy.query("SELECT count(*) AS n FROM measures WHERE tenant_id = 'alice'");
      expect(single.rows).toEqual([{ n: "6" }]);
    } finally {
      await regions.cluster.startServer(2);
    }
  });

  it("runs a scatter inside a string of statements and inside a block sent as one string", async () => {
    const client = await RawClient.connect({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "shop",
    });
    try {
      const batch = await client.query(
        "SELECT count(*) FROM orders; SELECT max(id) FROM measures WHERE tenant_id = 'bob'",
      );
      expect(batch.rows).toEqual([["100"], ["6"]]);
      expect(batch.tags).toEqual(["SELECT 1", "SELECT 1"]);
      expect(batch.status).toBe("I");
      const block = await client.query(
        "BEGIN; SELECT count(*) FROM users; SELECT status, count(*) FROM orders GROUP BY status ORDER BY status; COMMIT",
      );
      expect(block.rows).toEqual([["60"], ["open", "40"], ["paid", "60"]]);
      expect(block.status).toBe("I");
    } finally {
      await client.close();
    }
  });

  it("reads across regions in a postgres.js transaction with prepared statements", async () => {
    const sql = postgres(`postgres://postgres@127.0.0.1:${regions.proxy.port}/shop`, {
      max: 1,
      onnotice: () => undefined,
    });
    try {
      const [total, top] = await sql
        .begin(async (tx) => {
          await tx`UPDATE measures SET qty = 77777 WHERE tenant_id = ${"chandra"} AND id = ${2}`;
          const total = await tx`SELECT count(*)::int AS n FROM measures WHERE qty > ${0}`;
          const top = await tx`SELECT tenant_id, qty FROM measures ORDER BY qty DESC NULLS LAST LIMIT ${1}`;
          throw Object.assign(new Error("roll back"), { result: [total, top] });
        })
        .catch((error: { result?: unknown[] }) => error.result ?? []);
      expect((top as { tenant_id: string; qty: string }[])[0]).toEqual({
        tenant_id: "chandra",
        qty: "77777",
      });
      expect((total as { n: number }[])[0]!.n).toBeGreaterThan(0);
      const after = await sql`SELECT count(*)::int AS n FROM measures WHERE qty = 77777`;
      expect(after[0]!.n).toBe(0);
    } finally {
      await sql.end();
    }
  });

  it("answers scatters from more clients than the pools hold connections, none stalling", async () => {
    const statements = [
      "SELECT tenant_id, id, qty FROM measures ORDER BY qty, tenant_id, id LIMIT 5",
      "SELECT status, count(*), sum(total) FROM orders GROUP BY status ORDER BY status",
      "SELECT name FROM users ORDER BY name LIMIT 3",
    ];
    const expected = await Promise.all(
      statements.map(async (sql) => (await reference.query({ text: sql, rowMode: "array" })).rows),
    );
    const clients = await Promise.all(Array.from({ length: 6 }, () => textClient(regions.proxy.port)));
    try {
      await Promise.all(
        clients.map(async (client, c) => {
          for (let i = 0; i < 6; i++) {
            const which = (c + i) % statements.length;
            const result = await client.query({ text: statements[which]!, rowMode: "array" });
            expect(result.rows).toEqual(expected[which]);
          }
        }),
      );
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
  });

  it("describes a statement again once the schema under it changed", async () => {
    const sql = "SELECT tenant_id, id, label FROM measures ORDER BY id, tenant_id LIMIT 5";
    const types = async (client: pg.Client) => (await client.query(sql)).fields.map((f) => f.dataTypeID);
    expect(await types(proxy)).toEqual([25, 23, 25]);
    const alter = "ALTER TABLE measures ALTER COLUMN label TYPE varchar(40)";
    // Fresh clients: a test above restarted one region's server under its direct client.
    const servers = await Promise.all(
      regions.cluster.servers.map((server) => textClient(server.port, "postgres")),
    );
    try {
      await Promise.all([reference, ...servers].map((client) => client.query(alter)));
    } finally {
      await Promise.all(servers.map((client) => client.end()));
    }
    const [viaProxy, expected] = await Promise.all([
      proxy.query({ text: sql, rowMode: "array" }),
      reference.query({ text: sql, rowMode: "array" }),
    ]);
    expect(viaProxy.fields.map((f) => [f.dataTypeID, f.dataTypeModifier])).toEqual(
      expected.fields.map((f) => [f.dataTypeID, f.dataTypeModifier]),
    );
    expect(viaProxy.fields[2]!.dataTypeID).toBe(1043);
    expect(viaProxy.rows).toEqual(expected.rows);
  });
});
