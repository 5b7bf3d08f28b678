import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

let regions: RealRegions;

beforeAll(async () => {
  regions = await startRealRegions("\n[pool]\nmax = 2\n");
});
afterAll(() => regions?.close());

function proxyUrl(): string {
  return `postgres://postgres@127.0.0.1:${regions.proxy.port}/shop`;
}

async function ageOf(region: "eu-west" | "us-east" | "ap-south", key: string, id: number): Promise<number> {
  const result = await regions.direct[region].query(
    "SELECT age FROM users WHERE tenant_id = $1 AND id = $2",
    [key, id],
  );
  return result.rows[0].age as number;
}

describe("transaction control over the extended protocol", () => {
  it("finishes a postgres.js sql.begin whose only statement is an unsafe SELECT 1", async () => {
    const sql = postgres(proxyUrl(), { max: 1, onnotice: () => undefined });
    try {
      const rows = await sql.begin((tx) => tx.unsafe("SELECT 1 AS one"));
      expect(rows.map((row) => ({ ...row }))).toEqual([{ one: 1 }]);
    } finally {
      await sql.end();
    }
  });

  it("commits a postgres.js sql.begin with reads in two regions and a write in one", async () => {
    const sql = postgres(proxyUrl(), { max: 1, onnotice: () => undefined });
    try {
      const before = await ageOf("eu-west", "dmitri", 2);
      const [names, bobCount] = await sql.begin(async (tx) => {
        const read = await tx`SELECT name FROM users WHERE tenant_id = ${"dmitri"} ORDER BY id`;
        const other = await tx`SELECT count(*)::int AS n FROM orders WHERE tenant_id = ${"bob"}`;
        await tx`UPDATE users SET age = age + 1 WHERE tenant_id = ${"dmitri"} AND id = ${2}`;
        return [read.map((row) => row.name as string), other[0]!.n as number] as const;
      });
      expect(names).toEqual(["dmitri-1", "dmitri-2", "dmitri-3"]);
      expect(bobCount).toBe(5);
      expect(await ageOf("eu-west", "dmitri", 2)).toBe(before + 1);
      const status = await sql`SELECT 1 AS ok`;
      expect(status[0]!.ok).toBe(1);
    } finally {
      await sql.end();
    }
  });

  it("rolls back a postgres.js sql.begin whose callback throws", async () => {
    const sql = postgres(proxyUrl(), { max: 1, onnotice: () => undefined });
    try {
      const before = await ageOf("us-east", "george", 1);
      const outcome = await sql
        .begin(async (tx) => {
          await tx`UPDATE users SET age = age + 10 WHERE tenant_id = ${"george"} AND id = ${1}`;
          throw new Error("changed my mind");
        })
        .catch((error: Error) => error.message);
      expect(outcome).toBe("changed my mind");
      expect(await ageOf("us-east", "george", 1)).toBe(before);
    } finally {
      await sql.end();
    }
  });

  it("undoes only the work after a postgres.js tx.savepoint that failed", async () => {
    const sql = postgres(proxyUrl(), { max: 1, onnotice: () => undefined });
    try {
      const before1 = await ageOf("ap-south", "hiro", 1);
      const before2 = await ageOf("ap-south", "hiro", 2);
      await sql.begin(async (tx) => {
        await tx`UPDATE users SET age = age + 1 WHERE tenant_id = ${"hiro"} AND id = ${1}`;
        const inner = await tx
          .savepoint(async (sp) => {
            await sp`UPDATE users SET age = age + 1 WHERE tenant_id = ${"hiro"} AND id = ${2}`;
            await sp`SELECT 1 / 0 AS boom FROM users WHERE tenant_id = ${"hiro"}`;
          })
          .catch((error: { code?: string }) => error.code);
        expect(inner).toBe("22012");
        const kept = await tx.savepoint(
          (sp) => sp`UPDATE users SET age = age + 5 WHERE tenant_id = ${"hiro"} AND id = ${2} RETURNING age`,
        );
        expect(kept[0]!.age).toBe(before2 + 5);
      });
      expect(await ageOf("ap-south", "hiro", 1)).toBe(before1 + 1);
      expect(await ageOf("ap-south", "hiro", 2)).toBe(before2 + 5);
    } finally {
      await sql.end();
    }
  });

  it("runs node-postgres BEGIN, named and unnamed prepared statements and COMMIT", async () => {
    const client = new pg.Client({ connectionString: proxyUrl() });
    await client.connect();
    try {
      const before = await ageOf("eu-west", "ines", 3);
      await client.query("BEGIN");
      const agesText = "SELECT age FROM users WHERE tenant_id = $1 AND id = $2";
      const read = await client.query({ name: "ines-age", text: agesText, values: ["ines", 3] });
      expect(read.rows).toEqual([{ age: before }]);
      const updated = await client.query(
        "UPDATE users SET age = age + 2 WHERE tenant_id = $1 AND id = $2 RETURNING age",
        ["ines", 3],
      );
      expect(updated.rows).toEqual([{ age: before + 2 }]);
      const again = await client.query({ name: "ines-age", text: agesText, values: ["ines", 3] });
      expect(again.rows).toEqual([{ age: before + 2 }]);
      const commit = await client.query({ text: "COMMIT", values: [] });
      expect(commit.command).toBe("COMMIT");
      expect(await ageOf("eu-west", "ines", 3)).toBe(before + 2);
      const prepared = await client.query({ name: "begin-prepared", text: "BEGIN", values: [] });
      expect(prepared.command).toBe("BEGIN");
      await client.query("UPDATE users SET age = age + 7 WHERE tenant_id = $1 AND id = $2", ["ines", 3]);
      await client.query({ name: "rollback-prepared", text: "ROLLBACK", values: [] });
      expect(await ageOf("eu-west", "ines", 3)).toBe(before + 2);
    } finally {
      await client.end();
    }
  });

  it("runs SAVEPOINT, ROLLBACK TO and RELEASE sent as prepared statements", async () => {
    const client = new pg.Client({ connectionString: proxyUrl() });
    await client.connect();
    try {
      const before = await ageOf("us-east", "jamal", 2);
      const prepared = (text: string) => client.query({ text, values: [] });
      await prepared("BEGIN");
      await client.query("UPDATE users SET age = age + 1 WHERE tenant_id = $1 AND id = 2", ["jamal"]);
      await prepared("SAVEPOINT a");
      await client.query("UPDATE users SET age = age + 100 WHERE tenant_id = $1 AND id = 2", ["jamal"]);
      expect((await prepared("ROLLBACK TO SAVEPOINT a")).command).toBe("ROLLBACK");
      expect((await prepared("RELEASE a")).command).toBe("RELEASE");
      expect((await prepared("COMMIT")).command).toBe("COMMIT");
      expect(await ageOf("us-east", "jamal", 2)).toBe(before + 1);
    } finally {
      await client.end();
    }
  });

  it("answers a SET sent over the extended protocol inside and outside a block", async () => {
    const sql = postgres(proxyUrl(), { max: 1, onnotice: () => undefined });
    try {
      await sql`SET application_name = 'extended-set'`;
      const tz = await sql.begin(async (tx) => {
        await tx`SET LOCAL TimeZone = 'Asia/Tokyo'`;
        return tx`SELECT current_setting('TimeZone') AS tz, current_setting('application_name') AS app FROM users WHERE tenant_id = ${"alice"} AND id = ${1}`;
      });
      expect({ ...tz[0] }).toEqual({ tz: "Asia/Tokyo", app: "extended-set" });
    } finally {
      await sql.end();
    }
  });
});
