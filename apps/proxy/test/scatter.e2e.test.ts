import type pg from "pg";
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

interface Answer {
  readonly columns: { name: string; dataTypeID: number; dataTypeModifier: number }[];
  readonly rows: unknown[][];
  readonly command: string;
  readonly rowCount: number | null;
}

async function answer(client: pg.Client, sql: string, values?: unknown[]): Promise<Answer> {
  const result = await client.query({
    text: sql,
    rowMode: "array",
    ...(values === undefined ? {} : { values }),
  });
  return {
    columns: result.fields.map((f) => ({
      name: f.name,
      dataTypeID: f.dataTypeID,
      dataTypeModifier: f.dataTypeModifier,
    })),
    rows: result.rows as unknown[][],
    command: result.command,
    rowCount: result.rowCount,
  };
}

/** The proxy's answer equals the reference's: columns (names, types, modifiers), rows in order, row count. */
async function expectSameAnswer(sql: string, values?: unknown[]): Promise<Answer> {
  const [viaProxy, expected] = await Promise.all([
    answer(proxy, sql, values),
    answer(reference, sql, values),
  ]);
  expect({ sql, ...viaProxy }).toEqual({ sql, ...expected });
  return viaProxy;
}

describe("concatenation", () => {
  it("answers an IN list spanning two regions with every matching row", async () => {
    const got = await expectSameAnswer(
      "SELECT tenant_id, id, name FROM users WHERE tenant_id IN ('alice', 'bob') ORDER BY tenant_id, id",
    );
    expect(got.rows.length).toBe(6);
  });

  it("reads every region when the statement names no key", async () => {
    const [viaProxy, expected] = await Promise.all([
      answer(proxy, "SELECT tenant_id, id, status FROM orders"),
      answer(reference, "SELECT tenant_id, id, status FROM orders"),
    ]);
    const sorted = (rows: unknown[][]) => rows.map((row) => JSON.stringify(row)).sort();
    expect(sorted(viaProxy.rows)).toEqual(sorted(expected.rows));
    expect(viaProxy.rowCount).toBe(expected.rowCount);
    expect(viaProxy.columns).toEqual(expected.columns);
  });
});

describe("ordered merge in the proxy", () => {
  const statements = [
    "SELECT tenant_id, id, qty FROM measures ORDER BY qty, tenant_id, id LIMIT 7 OFFSET 3",
    "SELECT tenant_id, id, qty FROM measures ORDER BY qty DESC NULLS LAST, tenant_id, id LIMIT 10",
    "SELECT tenant_id, id, small FROM measures ORDER BY small NULLS FIRST, id, tenant_id LIMIT 12",
    "SELECT tenant_id, id, price FROM measures ORDER BY price DESC, id, tenant_id LIMIT 15 OFFSET 2",
    "SELECT tenant_id, id, score FROM measures ORDER BY score, id, tenant_id",
    "SELECT tenant_id, id, score FROM measures ORDER BY score DESC, id DESC, tenant_id DESC LIMIT 20",
    "SELECT tenant_id, id, ratio FROM measures ORDER BY ratio NULLS FIRST, id, tenant_id LIMIT 25",
    "SELECT tenant_id, id, tag FROM measures ORDER BY tag, id, tenant_id LIMIT 9",
    "SELECT tenant_id, id, flag FROM measures ORDER BY flag DESC, id, tenant_id LIMIT 30",
    "SELECT id, total FROM orders ORDER BY total DESC, id, user_id LIMIT 5 OFFSET 5",
    "SELECT id * 2 AS twice FROM measures ORDER BY 1, qty LIMIT 4",
  ];
  for (const sql of statements) {
    it(`merges ${sql}`, async () => {
      await expectSameAnswer(sql);
    });
  }

  it("applies OFFSET past the end once, answering no rows", async () => {
    const got = await expectSameAnswer("SELECT id FROM measures ORDER BY id, qty LIMIT 5 OFFSET 100000");
    expect(got.rows).toEqual([]);
  });
});

describe("home finish", () => {
  const statements = [
    "SELECT tenant_id, id, label FROM measures ORDER BY label, tenant_id, id LIMIT 8",
    "SELECT name FROM users ORDER BY name DESC LIMIT 5 OFFSET 1",
    "SELECT status, count(*), sum(total), avg(total), min(total), max(total) FROM orders GROUP BY status ORDER BY status",
    "SELECT user_id, count(*) AS n, sum(total) FROM orders GROUP BY user_id HAVING sum(total) > 100 ORDER BY user_id",
    "SELECT count(*), sum(qty), avg(qty), min(price), max(price), avg(price), bool_and(flag), bool_or(flag) FROM measures",
    "SELECT flag, count(*), sum(small), avg(small), min(score), max(score) FROM measures GROUP BY flag ORDER BY flag NULLS FIRST",
    "SELECT count(DISTINCT country), count(DISTINCT age) FROM users",
    "SELECT currency, count(DISTINCT user_id) FROM orders GROUP BY currency ORDER BY currency",
    "SELECT string_agg(name, ',' ORDER BY name) FROM users",
    "SELECT tenant_id, id, rank() OVER (ORDER BY total DESC, tenant_id, id) FROM orders ORDER BY 3 LIMIT 10",
    "SELECT name FROM users WHERE age > 40 UNION SELECT status FROM orders ORDER BY 1",
    "SELECT DISTINCT country FROM users ORDER BY country",
    "SELECT tenant_id, id, created_at FROM users ORDER BY created_at DESC NULLS FIRST, tenant_id, id LIMIT 6",
    "SELECT tenant_id, id, last_seen FROM users ORDER BY last_seen NULLS FIRST, tenant_id, id LIMIT 4 OFFSET 1",
    "SELECT count(*), sum(o.total) FROM users u JOIN orders o ON o.user_id = u.id AND o.buyer = u.id",
    "SELECT DISTINCT ON (currency) currency, tenant_id, total FROM orders ORDER BY currency, total DESC, tenant_id",
    "SELECT tenant_id, total FROM orders WHERE total > (SELECT avg(total) FROM orders) ORDER BY total DESC, tenant_id LIMIT 5",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY total) FROM orders",
    "SELECT ARRAY[status, currency::text] AS pair, count(*) FROM orders GROUP BY 1 ORDER BY 1",
    "SELECT tenant_id, array_agg(id ORDER BY id) FROM orders GROUP BY tenant_id ORDER BY tenant_id",
    "SELECT currency, min(created_at), max(created_at) FROM orders GROUP BY currency ORDER BY currency",
  ];
  for (const sql of statements) {
    it(`finishes ${sql}`, async () => {
      await expectSameAnswer(sql);
    });
  }
});

describe("refusals", () => {
  it("refuses a locking read across regions with 0A000 and a hint", async () => {
    const error = (await proxy.query("SELECT * FROM users FOR UPDATE").catch((e: unknown) => e)) as {
      code?: string;
      hint?: string;
    };
    expect(error.code).toBe("0A000");
    expect(error.hint).toBeTruthy();
  });

  it("refuses a gather past [gather] max_rows, naming the setting", async () => {
    const error = await proxy
      .query("SELECT string_agg(m.label, ',') FROM orders o JOIN measures m ON m.id = o.id")
      .catch((e: unknown) => e as { code?: string; hint?: string });
    expect((error as { code?: string }).code).toBe("53400");
    expect((error as { hint?: string }).hint).toContain("[gather] max_rows");
    expect((await proxy.query("SELECT 1 AS still")).rows).toEqual([{ still: "1" }]);
  });

  it("refuses to ship strict-residency rows home, and still merges their integer order in the proxy", async () => {
    const error = await proxy
      .query("SELECT secret FROM vault ORDER BY secret LIMIT 3")
      .catch((e: unknown) => e as { code?: string; hint?: string });
    expect((error as { code?: string }).code).toBe("0A000");
    expect((error as { hint?: string }).hint).toBeTruthy();
    const merged = await expectSameAnswer("SELECT id FROM vault ORDER BY id DESC LIMIT 4");
    expect(merged.rows).toEqual([["2"], ["2"], ["2"], ["2"]]);
  });
});
