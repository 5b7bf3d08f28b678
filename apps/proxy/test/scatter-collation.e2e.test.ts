import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGIONS } from "./support/fake-regions.js";
import type { RealRegions } from "./support/real-regions.js";
import { startScatterRegions, textClient } from "./support/scatter-regions.js";

let regions: RealRegions;
let proxy: pg.Client;
let reference: pg.Client;

beforeAll(async () => {
  regions = await startScatterRegions();
  // A column collation other than the database default ("C" is OID 950, the default is 100).
  const alter = `ALTER TABLE measures ALTER COLUMN label TYPE text COLLATE "C"`;
  for (const region of REGIONS) await regions.direct[region].query(alter);
  await regions.reference.query(alter);
  proxy = await textClient(regions.proxy.port);
  reference = await textClient(regions.cluster.servers[0]!.port, "reference");
});
afterAll(async () => {
  await proxy?.end().catch(() => undefined);
  await reference?.end().catch(() => undefined);
  await regions?.close();
});

async function rows(client: pg.Client, sql: string): Promise<unknown[][]> {
  return (await client.query({ text: sql, rowMode: "array" })).rows as unknown[][];
}

async function expectSameRows(sql: string): Promise<void> {
  const [viaProxy, expected] = await Promise.all([rows(proxy, sql), rows(reference, sql)]);
  expect(viaProxy.length).toBeGreaterThan(0);
  expect({ sql, rows: viaProxy }).toEqual({ sql, rows: expected });
}

async function failure(sql: string): Promise<{ code?: string; message?: string; hint?: string }> {
  return (await proxy.query(sql).then(
    () => ({}),
    (error: unknown) => error,
  )) as { code?: string; message?: string; hint?: string };
}

describe("columns in a non-default collation finished in the home region", () => {
  it("refuses ORDER BY such a column across regions with 0A000, naming it and hinting an explicit COLLATE", async () => {
    const error = await failure("SELECT id, label FROM measures ORDER BY label, tenant_id, id LIMIT 5");
    expect(error.code).toBe("0A000");
    expect(error.message).toContain('measures.label has collation "C"');
    expect(error.hint).toContain('COLLATE "C"');
    expect(error.hint).toContain("one region");
  });

  it("refuses an ORDER BY expression whose collation it cannot see when the table has such a column", async () => {
    const error = await failure("SELECT id FROM measures ORDER BY lower(label), tenant_id, id LIMIT 5");
    expect(error.code).toBe("0A000");
    expect(error.message).toContain("measures.label");
  });

  it("answers the same ORDER BY with an explicit COLLATE like one PostgreSQL", async () => {
    await expectSameRows('SELECT id, label FROM measures ORDER BY label COLLATE "C", tenant_id, id LIMIT 7');
  });

  it("still merges an integer order over the same table in the proxy", async () => {
    await expectSameRows("SELECT qty FROM measures ORDER BY qty NULLS FIRST LIMIT 6");
  });

  it("still answers a GROUP BY on a text column in the default collation", async () => {
    await expectSameRows("SELECT tenant_id, count(*) FROM measures GROUP BY tenant_id ORDER BY tenant_id");
  });
});
