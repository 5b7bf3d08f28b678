import { type PgCluster, RawClient, startCluster } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Analyzer, type GatherPlan, type HomeFinish } from "../src/index.js";

/**
 * Two "regions" are two schemas of one real PostgreSQL server holding disjoint halves of `users`;
 * `whole` holds every row. A plan is exact when running its region statements in r1 and r2 and its
 * finish in the home region gives what one server holding every row gives.
 */
const SETUP = `
CREATE SCHEMA r1; CREATE SCHEMA r2; CREATE SCHEMA whole;
CREATE TABLE r1.users (tenant_id text, country text, age int, score numeric(10,2), active bool, name text, created_at timestamptz, ratio real);
CREATE TABLE r2.users (LIKE r1.users);
CREATE TABLE whole.users (LIKE r1.users);
INSERT INTO r1.users SELECT 't' || (i % 5), (ARRAY['fr','de','us','jp'])[1 + i % 4],
  CASE WHEN i % 17 = 0 THEN NULL ELSE 18 + (i * 7) % 50 END, ((i * 13) % 1000) / 7.0, i % 3 = 0,
  'n' || lpad((i % 60)::text, 2, '0'), timestamptz '2026-01-01 00:00+00' + i * interval '37 minutes',
  (1000000 + i * 0.37)::real
  FROM generate_series(1, 200) i;
INSERT INTO r2.users SELECT 't' || (5 + i % 5), (ARRAY['fr','de','us','br'])[1 + i % 4],
  CASE WHEN i % 13 = 0 THEN NULL ELSE 18 + (i * 11) % 60 END, ((i * 17) % 1000) / 3.0, i % 4 = 0,
  'n' || lpad((i % 70)::text, 2, '0'), timestamptz '2026-01-01 00:00+00' + i * interval '41 minutes',
  (3000000 + i * 0.73)::real
  FROM generate_series(201, 420) i;
INSERT INTO whole.users SELECT * FROM r1.users UNION ALL SELECT * FROM r2.users;
`;

type Row = readonly (string | null)[];

let cluster: PgCluster;
let client: RawClient;
let analyzer: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create({ keyColumns: new Map([["users", "tenant_id"]]) });
  cluster = await startCluster({ count: 1, initSql: SETUP });
  const server = cluster.servers[0];
  if (server === undefined) throw new Error("no server started");
  client = await RawClient.connect({
    host: server.host,
    port: server.port,
    user: server.user,
    database: server.database,
  });
});

afterAll(async () => {
  await client?.close();
  await cluster?.stop();
});

async function run(sql: string, schema?: string): Promise<Row[]> {
  const result = await client.query(schema === undefined ? sql : `SET search_path = ${schema}; ${sql}`);
  if (result.error !== undefined) throw new Error(`${result.error.message} in: ${sql}`);
  return result.rows.map((r) => [...r]);
}

/** Column names and types a statement returns, as PostgreSQL names them. */
async function describeColumns(sql: string, schema: string): Promise<{ name: string; type: string }[]> {
  await run(`CREATE TEMP VIEW geo_probe AS ${sql}`, schema);
  const rows = await run(
    "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'geo_probe'::regclass AND attnum > 0 ORDER BY attnum",
  );
  await run("DROP VIEW geo_probe");
  return rows.map(([name, type]) => ({ name: name ?? "", type: type ?? "" }));
}

function quote(value: string | null): string {
  return value === null ? "NULL" : `'${value.replaceAll("'", "''")}'`;
}

/** One array argument per column, from the regions' rows, typed as the finish declares them. */
function arrays(rows: readonly Row[], types: readonly string[], from = 0): string[] {
  return types.map(
    (type, c) => `ARRAY[${rows.map((r) => quote(r[from + c] ?? null)).join(", ")}]::${type}[]`,
  );
}

async function execute(finish: string, args: readonly string[]): Promise<Row[]> {
  await run(`PREPARE geo_finish AS ${finish}`);
  try {
    return await run(`EXECUTE geo_finish(${args.join(", ")})`);
  } finally {
    await run("DEALLOCATE geo_finish");
  }
}

async function finishAcrossRegions(
  regionSql: string,
  homeFinish: HomeFinish,
  visibleNames?: readonly string[],
): Promise<Row[]> {
  const columns = await describeColumns(regionSql, "r1");
  const shipped = [...(await run(regionSql, "r1")), ...(await run(regionSql, "r2"))];
  const types = columns.map((c) => c.type);
  const finish = homeFinish.render(types, visibleNames);
  return execute(finish, arrays(shipped, types));
}

async function gatherAcrossRegions(plan: GatherPlan): Promise<Row[]> {
  const shippedRelations = [];
  const args: string[] = [];
  for (const source of plan.sources) {
    const columns = await describeColumns(source.regionSql, "r1");
    const rows = [...(await run(source.regionSql, "r1")), ...(await run(source.regionSql, "r2"))];
    shippedRelations.push({ table: source.table, columns });
    args.push(
      ...arrays(
        rows,
        columns.map((c) => c.type),
      ),
    );
  }
  return execute(plan.render(shippedRelations), args);
}

const sorted = (rows: readonly Row[]): string[] => rows.map((r) => JSON.stringify(r)).sort();

describe("home-region finishes on real PostgreSQL", () => {
  const partialAggregates = [
    "SELECT country, count(*), avg(age) FROM users GROUP BY country HAVING count(*) > 10 ORDER BY country",
    "SELECT count(*), sum(age), min(name), max(score), avg(score), sum(score), bool_and(active), bool_or(active), every(active) FROM users",
    "SELECT CASE WHEN count(*) > 100 THEN 'many' ELSE 'few' END AS size, country FROM users GROUP BY country ORDER BY country",
    "SELECT count(DISTINCT country), count(DISTINCT tenant_id), avg(DISTINCT age), sum(DISTINCT age) FROM users",
    "SELECT DISTINCT country FROM users ORDER BY country",
    "SELECT tenant_id, count(*) AS n FROM users GROUP BY 1 ORDER BY n DESC, tenant_id LIMIT 3 OFFSET 1",
    "SELECT country, sum(age) FILTER (WHERE active), count(age) FROM users GROUP BY country ORDER BY 1",
    "SELECT avg(age), count(*), sum(score) FROM users WHERE age > 1000",
    "SELECT round(avg(score), 3) + 1 AS shifted, upper(country) FROM users GROUP BY upper(country) ORDER BY 2",
    // No aggregate and no GROUP BY: still one group, kept or dropped by HAVING.
    "SELECT 1 FROM users HAVING true",
    "SELECT 'x' AS one FROM users WHERE age > 1000 HAVING 1 = 1",
    "SELECT 1 FROM users HAVING false",
  ];

  it.each(partialAggregates)("rebuilds %j exactly from per-region partials", async (sql) => {
    const plan = analyzer.analyze(sql).merge;
    if (plan.tier !== "partial-aggregate") throw new Error(`expected partial aggregates, got ${plan.tier}`);
    const truth = await run(sql, "whole");
    const combined = await finishAcrossRegions(plan.regionSql, plan.homeFinish);
    if (sql.includes("ORDER BY")) expect(combined).toEqual(truth);
    else expect(sorted(combined)).toEqual(sorted(truth));
  });

  // avg(real) adds in double precision in one server; real partial sums would drift by whole units.
  it.each([
    "SELECT avg(ratio) FROM users",
    "SELECT country, avg(ratio), avg(age) FROM users GROUP BY country ORDER BY country",
  ])("averages real values as one server does: %j", async (sql) => {
    const plan = analyzer.analyze(sql).merge;
    if (plan.tier !== "partial-aggregate") throw new Error(`expected partial aggregates, got ${plan.tier}`);
    const round = (rows: readonly Row[]) =>
      rows.map((r) => r.map((v) => (v !== null && /\d\.\d/.test(v) ? Number(v).toPrecision(12) : v)));
    const truth = await run(sql, "whole");
    expect(round(await finishAcrossRegions(plan.regionSql, plan.homeFinish))).toEqual(round(truth));
    // The real partial sums themselves are too coarse to give that answer.
    const coarse = await run("SELECT (sum(ratio)::float8 / count(ratio))::text FROM r1.users");
    const exact = await run("SELECT avg(ratio)::text FROM r1.users");
    expect(Number(coarse[0]?.[0]).toPrecision(12)).not.toBe(Number(exact[0]?.[0]).toPrecision(12));
  });

  // The double-precision partial is taken only for real arguments: a numeric beyond float8's
  // range would overflow in it, where one server's avg answers.
  it("averages numeric values beyond double precision's range as one server does", async () => {
    const sql = "SELECT avg(score * 1e400) AS a FROM users";
    const plan = analyzer.analyze(sql).merge;
    if (plan.tier !== "partial-aggregate") throw new Error(`expected partial aggregates, got ${plan.tier}`);
    const truth = await run(sql, "whole");
    expect(await finishAcrossRegions(plan.regionSql, plan.homeFinish)).toEqual(truth);
  });

  const ordered = [
    "SELECT name, age FROM users ORDER BY name DESC, age LIMIT 5 OFFSET 2",
    "SELECT tenant_id, created_at FROM users ORDER BY created_at, tenant_id LIMIT 7",
    "SELECT name, score FROM users WHERE age IS NOT NULL ORDER BY 2 DESC NULLS LAST, 1 LIMIT 4",
  ];

  it.each(ordered)("re-sorts %j in the home region when the proxy cannot compare", async (sql) => {
    const plan = analyzer.analyze(sql).merge;
    if (plan.tier !== "ordered") throw new Error(`expected ordered, got ${plan.tier}`);
    const truth = await run(sql, "whole");
    const names = (await describeColumns(sql, "whole")).map((c) => c.name);
    expect(await finishAcrossRegions(plan.regionSql, plan.homeFinish, names)).toEqual(truth);
  });

  // The ties of the last row kept are part of the answer: as a set of rows it is exact. (Which
  // tied rows an OFFSET skips is PostgreSQL's choice, so those statements select only the keys.)
  const withTies = [
    "SELECT name, age FROM users ORDER BY age FETCH FIRST 3 ROWS WITH TIES",
    "SELECT age FROM users ORDER BY age DESC OFFSET 4 FETCH FIRST 2 ROWS WITH TIES",
    "SELECT age FROM users ORDER BY age NULLS FIRST OFFSET 30 FETCH FIRST 2 ROWS WITH TIES",
    "SELECT country, age FROM users WHERE age IS NOT NULL ORDER BY country, age OFFSET 7 ROWS FETCH NEXT 1 ROW WITH TIES",
  ];

  it.each(withTies)("keeps every tie of %j", async (sql) => {
    const plan = analyzer.analyze(sql).merge;
    if (plan.tier !== "partial-aggregate") throw new Error(`expected a home finish, got ${plan.tier}`);
    const truth = await run(sql, "whole");
    const names = (await describeColumns(sql, "whole")).map((c) => c.name);
    const combined = await finishAcrossRegions(plan.regionSql, plan.homeFinish, names);
    expect(truth.length).toBeGreaterThan(Number(/FIRST (\d+)/.exec(sql)?.[1] ?? 1));
    expect(sorted(combined)).toEqual(sorted(truth));
  });

  const gathers = [
    "SELECT name, string_agg(country, ',' ORDER BY country) FROM users WHERE age > 30 GROUP BY name ORDER BY name LIMIT 5",
    "SELECT country, stddev(age) FROM users GROUP BY country ORDER BY country",
    "SELECT name, rank() OVER (PARTITION BY country ORDER BY age, name) FROM users WHERE active ORDER BY 1, 2 LIMIT 10",
  ];

  it.each(gathers)("answers %j by shipping rows home", async (sql) => {
    const plan = analyzer.analyze(sql).merge;
    if (plan.tier !== "gather") throw new Error(`expected gather, got ${plan.tier}`);
    expect(await gatherAcrossRegions(plan)).toEqual(await run(sql, "whole"));
  });
});

describe("the regions' LIMIT on real PostgreSQL", () => {
  /** Runs a region statement prepared with bigint parameters; the SQLSTATE it raised, or its row count. */
  async function regionAnswer(sql: string, args: readonly string[]): Promise<string | number> {
    const types = args.length === 0 ? "" : `(${args.map(() => "bigint").join(", ")})`;
    await run(`SET search_path = r1; PREPARE geo_region${types} AS ${sql}`);
    try {
      const result = await client.query(
        `EXECUTE geo_region${args.length === 0 ? "" : `(${args.join(", ")})`}`,
      );
      return result.error === undefined ? result.rows.length : result.error.code;
    } finally {
      await run("DEALLOCATE geo_region; RESET search_path");
    }
  }

  // [statement, arguments, one server's answer on r1's 200 rows]: SQLSTATE or rows before the
  // proxy's own cut (which never turns an error into rows).
  const rows: [string, string[], string | number][] = [
    ["SELECT * FROM users LIMIT 5 OFFSET -1", [], "2201X"],
    ["SELECT * FROM users LIMIT -1 OFFSET 3", [], "2201W"],
    ["SELECT * FROM users LIMIT $1 OFFSET $2", ["5", "-1"], "2201X"],
    ["SELECT * FROM users LIMIT $1 OFFSET $2", ["-1", "3"], "2201W"],
    ["SELECT * FROM users LIMIT $1 OFFSET $2", ["9223372036854775807", "5"], 200],
    ["SELECT * FROM users LIMIT $1 OFFSET $2", ["3", "4"], 7],
    ["SELECT * FROM users LIMIT $1 OFFSET $2", ["NULL", "4"], 200],
    ["SELECT * FROM users LIMIT $1 OFFSET $2", ["3", "NULL"], 3],
    ["SELECT * FROM users OFFSET $1", ["-2"], "2201X"],
    ["SELECT * FROM users OFFSET $1", ["150"], 200],
    ["SELECT * FROM users LIMIT $1 OFFSET 2", ["9223372036854775806"], 200],
  ];

  it.each(rows)("runs %s with %j in each region as one server would", async (sql, args, expected) => {
    const merge = analyzer.analyze(sql).merge;
    if (merge.tier !== "concat") throw new Error(`expected concat, got ${merge.tier}`);
    expect(await regionAnswer(merge.regionSql, args)).toBe(expected);
  });
});
