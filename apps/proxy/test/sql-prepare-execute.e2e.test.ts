import { encodeBind, encodeExecute, encodeParse, encodeQuery, encodeSync } from "@geo/proto";
import type { RawClient } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";
import { exchange, type SideBySide, sideBySide } from "./support/side-by-side.js";

// SQL-level PREPARE of statements that span regions: the proxy holds them and runs each EXECUTE
// as the statement with its arguments, so every answer equals one PostgreSQL holding every row
// (the reference database), message for message.
let regions: RealRegions;
let pair: SideBySide;
let proxied: RawClient;

beforeAll(async () => {
  regions = await startRealRegions();
  pair = await sideBySide(regions.cluster.servers[0]!, regions.proxy.port, { directDatabase: "reference" });
  proxied = pair.proxied;
});
afterAll(async () => {
  await pair?.close();
  await regions?.close();
});

async function same(sql: string): Promise<string[]> {
  const [expected, got] = await pair.both(encodeQuery({ sql }));
  expect(got, sql).toEqual(expected);
  return got;
}

describe("SQL PREPARE of a statement spanning regions", () => {
  it("answers PREPARE and each EXECUTE as one PostgreSQL holding every row", async () => {
    expect(await same("PREPARE all_orders AS SELECT count(*), sum(total) FROM orders")).toEqual([
      "CommandComplete PREPARE",
      "ReadyForQuery I",
    ]);
    const rows = await same("EXECUTE all_orders");
    expect(rows.filter((line) => line.startsWith("DataRow"))).toHaveLength(1);
  });

  it("routes a keyed statement by the key its argument binds, for every key", async () => {
    await same(
      "PREPARE by_tenant (text) AS SELECT tenant_id, id, total FROM orders WHERE tenant_id = $1 ORDER BY id",
    );
    for (const key of ["alice", "bob", "chandra", "nobody"]) {
      const lines = await same(`EXECUTE by_tenant('${key}')`);
      if (key !== "nobody") expect(lines.some((line) => line.includes(`"${key}"`))).toBe(true);
    }
  });

  it("learns parameter types PostgreSQL inferred, and names columns as PostgreSQL did", async () => {
    await same(
      "PREPARE shaped AS SELECT $1, $2 + 0 AS bumped, CASE WHEN $2 > 0 THEN 'p' ELSE $1 END, count(*) FROM users WHERE age > $2",
    );
    const lines = await same("EXECUTE shaped('x', 30)");
    expect(lines[0]).toMatch(/^RowDescription \?column\?:25,bumped:23,case:25,count:20$/);
    await same("EXECUTE shaped(NULL, -5)");
  });

  it("passes numbers through the cast an assignment uses", async () => {
    await same("PREPARE over (int4) AS SELECT count(*) FROM orders WHERE total > $1");
    await same("EXECUTE over(10.6)");
    await same("EXECUTE over('12')");
  });

  it("writes a row in the region of its key", async () => {
    await same(
      "PREPARE add_user (text, int) AS INSERT INTO users (tenant_id, id, name, country, age) VALUES ($1, $2, 'n', 'US', 40) RETURNING tenant_id, id",
    );
    await same("BEGIN");
    await same("EXECUTE add_user('bob', 991)");
    await same("ROLLBACK");
    expect(await same("EXECUTE add_user('bob', 992)")).toContain("CommandComplete INSERT 0 1");
    const where = await Promise.all(
      (["eu-west", "us-east", "ap-south"] as const).map(
        async (region) =>
          (await regions.direct[region].query("SELECT count(*)::int AS n FROM users WHERE id = 992")).rows[0]
            .n,
      ),
    );
    expect(where).toEqual([0, 1, 0]);
    await same("DELETE FROM users WHERE tenant_id = 'bob' AND id = 992");
  });

  it("gives PostgreSQL's own errors: arity, a name in use, a bad statement, a failed block", async () => {
    await same("PREPARE counted (text) AS SELECT count(*) FROM orders WHERE tenant_id = $1");
    expect((await same("EXECUTE counted('a', 'b')"))[0]).toBe("ErrorResponse 42601");
    expect((await same("EXECUTE counted"))[0]).toBe("ErrorResponse 42601");
    expect((await same("PREPARE counted AS SELECT count(*) FROM orders"))[0]).toBe("ErrorResponse 42P05");
    expect((await same("PREPARE broken AS SELECT count(*) FROM no_such_table"))[0]).toBe(
      "ErrorResponse 42P01",
    );
    expect((await same("EXECUTE broken"))[0]).toBe("ErrorResponse 26000");
    await same("BEGIN");
    await same("SELECT 1/0");
    expect((await same("EXECUTE counted('bob')"))[0]).toBe("ErrorResponse 25P02");
    await same("ROLLBACK");
  });

  it("keeps a statement prepared in a block that rolled back, and forgets it at DEALLOCATE", async () => {
    await same("BEGIN");
    await same("PREPARE kept AS SELECT count(*) FROM users");
    await same("ROLLBACK");
    await same("EXECUTE kept");
    expect(await same("DEALLOCATE kept")).toEqual(["CommandComplete DEALLOCATE", "ReadyForQuery I"]);
    expect((await same("EXECUTE kept"))[0]).toBe("ErrorResponse 26000");
  });

  it("runs PREPARE and EXECUTE inside one string, and DEALLOCATE ALL forgets every one", async () => {
    await same("PREPARE in_string AS SELECT count(*) FROM orders; EXECUTE in_string; EXECUTE all_orders");
    await same("DEALLOCATE ALL");
    expect((await same("EXECUTE in_string"))[0]).toBe("ErrorResponse 26000");
    expect((await same("EXECUTE all_orders"))[0]).toBe("ErrorResponse 26000");
  });

  it("refuses an argument it cannot pass exactly, and EXECUTE sent with Parse, naming the fix", async () => {
    await same("PREPARE at_time (timestamptz) AS SELECT count(*) FROM orders WHERE created_at < $1");
    const [lines] = [await exchange(proxied, encodeQuery({ sql: "EXECUTE at_time(now())" }))];
    expect(lines[0]).toBe("ErrorResponse 0A000");
    await same("EXECUTE at_time('2030-01-01 00:00:00+00')");
    const parsed = await exchange(
      proxied,
      Buffer.concat([
        encodeParse({ name: "", sql: "EXECUTE at_time('2030-01-01')", paramTypes: [] }),
        encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
        encodeExecute({ portal: "", maxRows: 0 }),
        encodeSync(),
      ]),
    );
    expect(parsed).toContain("ErrorResponse 0A000");
    expect(parsed[parsed.length - 1]).toBe("ReadyForQuery I");
  });
});

describe("ROUTE EXECUTE", () => {
  it("routes an EXECUTE of a held statement as the statement it runs", async () => {
    await same("PREPARE routed_by (text) AS SELECT count(*) FROM orders WHERE tenant_id = $1");
    const lines = await exchange(proxied, encodeQuery({ sql: "ROUTE EXECUTE routed_by('bob')" }));
    expect(lines).toContain(
      `DataRow ["executes","SELECT count(*) FROM orders WHERE tenant_id = CAST('bob' AS pg_catalog.\\"text\\")"]`,
    );
    expect(lines).toContain('DataRow ["plan","one region: us-east (ReadOnly)"]');
    const refused = await exchange(proxied, encodeQuery({ sql: "ROUTE EXECUTE routed_by(1, 2)" }));
    expect(refused).toContain('DataRow ["plan","refused [42601]"]');
  });
});
