import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import {
  type BackendMessage,
  encodeBind,
  encodeCancelRequest,
  encodeExecute,
  encodeParse,
  encodeQuery,
  encodeSync,
  PgError,
} from "@geo/proto";
import { findPostgresBinaries, RawClient } from "@geo/testkit";
import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGIONS, type RegionName } from "./support/fake-regions.js";
import { type RealRegions, startRealRegions } from "./support/real-regions.js";

// Maintenance commands through the proxy over three real regions: each runs in every region that
// holds a copy of its table (every region when it names none), one region after the other,
// outside any transaction; the effect is checked on each region's own server.
let regions: RealRegions;
let client: pg.Client;
let raw: RawClient;
const notices: { severity: string; code: string; message: string }[] = [];

/** The order the plan runs the regions in (by id). */
const IN_ORDER: readonly RegionName[] = [...REGIONS].sort();

beforeAll(async () => {
  regions = await startRealRegions();
  client = new pg.Client({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
  });
  client.on("notice", (notice) =>
    notices.push({
      severity: (notice as { severity?: string }).severity ?? "",
      code: (notice as { code?: string }).code ?? "",
      message: notice.message ?? "",
    }),
  );
  await client.connect();
  raw = await RawClient.connect({
    host: "127.0.0.1",
    port: regions.proxy.port,
    user: "postgres",
    database: "postgres",
    timeoutMs: 10_000,
  });
});
afterAll(async () => {
  await client?.end().catch(() => undefined);
  await raw?.close();
  await regions?.close();
});

/** Runs `sql` through the proxy; returns its tag and the notices it brought. */
async function run(sql: string): Promise<{ command: string; notices: typeof notices }> {
  notices.length = 0;
  const result = await client.query(sql);
  return { command: result.command, notices: [...notices] };
}

/** One value per region, read from each region's own server. */
async function perRegion<T>(sql: string, params: unknown[] = []): Promise<Record<RegionName, T>> {
  const out = {} as Record<RegionName, T>;
  for (const region of REGIONS) {
    const result = await regions.direct[region].query(sql, params);
    out[region] = result.rows[0]?.v as T;
  }
  return out;
}

const counter = (column: string, table = "users"): Promise<Record<RegionName, number>> =>
  perRegion<number>(`SELECT ${column}::int AS v FROM pg_stat_user_tables WHERE relname = $1`, [table]);

function plusOne(before: Record<RegionName, number>): Record<RegionName, number> {
  const out = {} as Record<RegionName, number>;
  for (const region of REGIONS) out[region] = before[region] + 1;
  return out;
}

function finishedNotices(command: string): string[] {
  return IN_ORDER.map(
    (region, i) => `${command} finished in region ${region} (${i + 1} of ${IN_ORDER.length})`,
  );
}

/** Parse, Bind, Execute and Sync of one statement without parameters. */
function extended(sql: string): Buffer[] {
  return [
    encodeParse({ name: "", sql, paramTypes: [] }),
    encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
    encodeExecute({ portal: "", maxRows: 0 }),
    encodeSync(),
  ];
}

/** The SQLSTATE and message a query failed with, or null when it succeeded. */
function failure(query: Promise<unknown>): Promise<{ code: string; message: string } | null> {
  return query.then(
    () => null,
    (error: { code: string; message: string }) => ({ code: error.code, message: error.message }),
  );
}

/** Messages of a raw exchange as lines, notices and errors with their code and message. */
async function exchange(bytes: Buffer): Promise<string[]> {
  raw.send(bytes);
  const lines: string[] = [];
  for (;;) {
    const message: BackendMessage = await raw.next();
    if (message.type === "NoticeResponse" || message.type === "ErrorResponse") {
      const error = PgError.fromFields(message.fields);
      lines.push(`${message.type} ${error.code} ${error.message}`);
    } else if (message.type === "CommandComplete") lines.push(`CommandComplete ${message.tag}`);
    else if (message.type === "ReadyForQuery") {
      lines.push(`ReadyForQuery ${message.status}`);
      return lines;
    } else lines.push(message.type);
  }
}

describe("maintenance commands in every region", () => {
  it("VACUUM users vacuums the table in every region, with one tag and a notice per region", async () => {
    const before = await counter("vacuum_count");
    const answer = await run("VACUUM users");
    expect(answer.command).toBe("VACUUM");
    expect(answer.notices.map((notice) => notice.message)).toEqual(finishedNotices("VACUUM"));
    expect(await counter("vacuum_count")).toEqual(plusOne(before));
  });

  it("answers with one CommandComplete of the command's own tag after the regions' notices", async () => {
    expect(await exchange(encodeQuery({ sql: "ANALYZE users" }))).toEqual([
      ...finishedNotices("ANALYZE").map((message) => `NoticeResponse 00000 ${message}`),
      "CommandComplete ANALYZE",
      "ReadyForQuery I",
    ]);
  });

  it("ANALYZE users analyzes the table in every region", async () => {
    const before = await counter("analyze_count");
    expect((await run("ANALYZE users")).command).toBe("ANALYZE");
    expect(await counter("analyze_count")).toEqual(plusOne(before));
  });

  it("VACUUM VERBOSE relays each region's own INFO lines", async () => {
    const answer = await run("VACUUM (VERBOSE) users");
    const users = (message: string): boolean => message.startsWith('vacuuming "postgres.public.users"');
    const vacuuming = answer.notices.filter((notice) => notice.severity === "INFO" && users(notice.message));
    expect(vacuuming).toHaveLength(3);
    // Each region's lines come before the notice that says it finished.
    const order = answer.notices
      .filter((notice) => users(notice.message) || notice.message.includes("finished in region"))
      .map((notice) => (users(notice.message) ? "info" : "done"));
    expect(order).toEqual(["info", "done", "info", "done", "info", "done"]);
  });

  it("VACUUM without a table vacuums every region's tables", async () => {
    const users = await counter("vacuum_count");
    const audit = await counter("vacuum_count", "eu_audit");
    const answer = await run("VACUUM");
    expect(answer.command).toBe("VACUUM");
    expect(answer.notices.map((notice) => notice.message)).toEqual(finishedNotices("VACUUM"));
    expect(await counter("vacuum_count")).toEqual(plusOne(users));
    // A table of one region's (pinned there) exists in every region's schema: each is vacuumed.
    expect(await counter("vacuum_count", "eu_audit")).toEqual(plusOne(audit));
  });

  it("CHECKPOINT makes a checkpoint in every region", async () => {
    const lsn = "SELECT checkpoint_lsn::text AS v FROM pg_control_checkpoint()";
    const before = await perRegion<string>(lsn);
    expect((await run("CHECKPOINT")).command).toBe("CHECKPOINT");
    const after = await perRegion<string>(lsn);
    for (const region of REGIONS) expect(after[region], region).not.toBe(before[region]);
  });

  it("REINDEX TABLE users rebuilds the table's indexes in every region", async () => {
    const file = "SELECT relfilenode::int AS v FROM pg_class WHERE relname = 'users_pkey'";
    const before = await perRegion<number>(file);
    expect((await run("REINDEX TABLE users")).command).toBe("REINDEX");
    const after = await perRegion<number>(file);
    for (const region of REGIONS) expect(after[region], region).not.toBe(before[region]);
  });

  it("CLUSTER users reorders the table by its clustered index in every region", async () => {
    // Marked through the proxy too: ALTER TABLE is transactional DDL, one commit in every region.
    await client.query("ALTER TABLE users CLUSTER ON users_pkey");
    expect(
      await perRegion<boolean>(
        "SELECT indisclustered AS v FROM pg_index WHERE indexrelid = 'users_pkey'::regclass",
      ),
    ).toEqual({ "eu-west": true, "us-east": true, "ap-south": true });
    const file = "SELECT relfilenode::int AS v FROM pg_class WHERE relname = 'users'";
    const before = await perRegion<number>(file);
    const answer = await run("CLUSTER users");
    expect(answer.command).toBe("CLUSTER");
    expect(answer.notices.map((notice) => notice.message)).toEqual(finishedNotices("CLUSTER"));
    const after = await perRegion<number>(file);
    for (const region of REGIONS) expect(after[region], region).not.toBe(before[region]);
  });

  it("CREATE INDEX CONCURRENTLY builds a valid index in every region, and DROP INDEX CONCURRENTLY drops it", async () => {
    const valid =
      "SELECT (SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('users_country_idx')) AS v";
    const created = await run("CREATE INDEX CONCURRENTLY users_country_idx ON users (country)");
    expect(created.command).toBe("CREATE");
    expect(created.notices.map((notice) => notice.message)).toEqual(
      finishedNotices("CREATE INDEX CONCURRENTLY"),
    );
    expect(await perRegion<boolean>(valid)).toEqual({ "eu-west": true, "us-east": true, "ap-south": true });

    const dropped = await run("DROP INDEX CONCURRENTLY users_country_idx");
    expect(dropped.command).toBe("DROP");
    expect(dropped.notices.map((notice) => notice.message)).toEqual(
      finishedNotices("DROP INDEX CONCURRENTLY"),
    );
    expect(await perRegion<boolean | null>(valid)).toEqual({
      "eu-west": null,
      "us-east": null,
      "ap-south": null,
    });
  });

  it("gives the exact tags of CREATE INDEX and DROP INDEX on the wire", async () => {
    const created = await exchange(
      encodeQuery({ sql: "CREATE INDEX CONCURRENTLY users_age_idx ON users (age)" }),
    );
    expect(created.slice(-2)).toEqual(["CommandComplete CREATE INDEX", "ReadyForQuery I"]);
    const dropped = await exchange(encodeQuery({ sql: "DROP INDEX CONCURRENTLY users_age_idx" }));
    expect(dropped.slice(-2)).toEqual(["CommandComplete DROP INDEX", "ReadyForQuery I"]);
  });
});

describe("maintenance commands inside a transaction block", () => {
  it("VACUUM inside BEGIN gets PostgreSQL's own 25001 and runs nowhere", async () => {
    const before = await counter("vacuum_count");
    const direct = regions.direct["eu-west"];
    await direct.query("BEGIN");
    const expected = await failure(direct.query("VACUUM users"));
    await direct.query("ROLLBACK");

    await client.query("BEGIN");
    const got = await failure(client.query("VACUUM users"));
    expect(got).toEqual({ code: "25001", message: "VACUUM cannot run inside a transaction block" });
    expect(got).toEqual(expected);
    // The block failed, as on one server.
    await expect(client.query("SELECT 1")).rejects.toMatchObject({ code: "25P02" });
    await client.query("ROLLBACK");
    expect(await counter("vacuum_count")).toEqual(before);
  });

  it.each([
    "VACUUM",
    "VACUUM (ANALYZE) users",
    "CLUSTER",
    "REINDEX TABLE CONCURRENTLY users",
    "REINDEX INDEX CONCURRENTLY users_pkey",
    "REINDEX SCHEMA public",
    "REINDEX SYSTEM postgres",
    "REINDEX DATABASE postgres",
    "DROP INDEX CONCURRENTLY users_pkey",
  ])("%s inside BEGIN gets the SQLSTATE and message PostgreSQL gives", async (sql) => {
    const direct = regions.direct["eu-west"];
    await direct.query("BEGIN");
    const expected = await failure(direct.query(sql));
    await direct.query("ROLLBACK");
    await client.query("BEGIN");
    const got = await failure(client.query(sql));
    await client.query("ROLLBACK");
    expect(expected?.code).toBe("25001");
    expect(got).toEqual(expected);
  });

  it("CREATE INDEX CONCURRENTLY inside BEGIN gets 25001 and no region has the index", async () => {
    await client.query("BEGIN");
    await expect(
      client.query("CREATE INDEX CONCURRENTLY users_in_block ON users (name)"),
    ).rejects.toMatchObject({
      code: "25001",
      message: "CREATE INDEX CONCURRENTLY cannot run inside a transaction block",
    });
    await client.query("ROLLBACK");
    expect(await perRegion<string | null>("SELECT to_regclass('users_in_block')::text AS v")).toEqual({
      "eu-west": null,
      "us-east": null,
      "ap-south": null,
    });
  });

  it("VACUUM in a string of several statements gets 25001, as PostgreSQL's implicit block gives", async () => {
    const before = await counter("vacuum_count");
    await expect(client.query("SELECT 1; VACUUM users")).rejects.toMatchObject({ code: "25001" });
    expect(await counter("vacuum_count")).toEqual(before);
  });

  it("ANALYZE inside BEGIN runs in every region as part of the block", async () => {
    const before = await counter("analyze_count");
    await client.query("BEGIN");
    expect((await client.query("ANALYZE users")).command).toBe("ANALYZE");
    await client.query("COMMIT");
    expect(await counter("analyze_count")).toEqual(plusOne(before));
  });
});

describe("a maintenance command that fails in one region", () => {
  it("stops there and names the regions that finished and those not run, with how to resume", async () => {
    // The name is taken in eu-west only, by an index made straight on that server.
    await regions.direct["eu-west"].query("CREATE INDEX users_taken ON users (age)");
    const error = (await client
      .query("CREATE INDEX CONCURRENTLY users_taken ON users (name)")
      .catch((caught: unknown) => caught)) as { code: string; message: string; detail: string; hint: string };
    expect(error.code).toBe("42P07");
    expect(error.message).toBe(
      'CREATE INDEX CONCURRENTLY failed in region eu-west: relation "users_taken" already exists',
    );
    expect(error.detail).toBe("Finished in: ap-south. Failed in: eu-west. Not run in: us-east.");
    expect(error.hint).toContain("/* geo: region=eu-west */ DROP INDEX CONCURRENTLY IF EXISTS users_taken");
    expect(error.hint).toContain("IF NOT EXISTS");
    const columns = await perRegion<string | null>(
      "SELECT (SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] WHERE i.indexrelid = to_regclass('users_taken'))::text AS v",
    );
    // ap-south built it, eu-west kept its own, us-east never ran the statement.
    expect(columns).toEqual({ "ap-south": "name", "eu-west": "age", "us-east": null });
    // The session goes on.
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await regions.direct["eu-west"].query("DROP INDEX users_taken");
    await regions.direct["ap-south"].query("DROP INDEX users_taken");
  });
});

describe("a maintenance command cancelled by its client", () => {
  it("is cancelled in the region running it, and the regions after it are not run", async () => {
    const before = await counter("vacuum_count");
    // us-east, the last region, waits for this lock: VACUUM needs SHARE UPDATE EXCLUSIVE.
    const holder = regions.direct["us-east"];
    await holder.query("BEGIN");
    await holder.query("LOCK TABLE users IN SHARE MODE");
    const canceller = await RawClient.connect({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "postgres",
    });
    try {
      const running = canceller.query("VACUUM users");
      // Until us-east's VACUUM waits for the lock (a condition, not a time).
      for (;;) {
        // Inside its block the holder would read one snapshot of the activity for good.
        await holder.query("SELECT pg_stat_clear_snapshot()");
        const waiting = await holder.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'VACUUM users' AND wait_event_type = 'Lock'",
        );
        if (waiting.rows[0].n === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise<void>((resolve, reject) => {
        const socket = connect(regions.proxy.port, "127.0.0.1", () => {
          socket.end(encodeCancelRequest({ processId: canceller.processId, secretKey: canceller.secretKey }));
        });
        socket.on("close", () => resolve());
        socket.on("error", reject);
      });
      const cancelled = await running;
      expect(cancelled.error?.code).toBe("57014");
      expect(cancelled.error?.message).toBe(
        "VACUUM failed in region us-east: canceling statement due to user request",
      );
      expect(cancelled.error?.detail).toBe(
        "Finished in: ap-south, eu-west. Failed in: us-east. Not run in: none.",
      );
      expect(cancelled.status).toBe("I");
      expect((await canceller.query("SELECT 1")).rows).toEqual([["1"]]);
    } finally {
      await holder.query("ROLLBACK");
      await canceller.close();
    }
    expect(await counter("vacuum_count")).toEqual({
      "ap-south": before["ap-south"] + 1,
      "eu-west": before["eu-west"] + 1,
      "us-east": before["us-east"],
    });
  });
});

/** One command through psql (simple query protocol, no psqlrc): its standard output, error and status. */
function psql(command: string): Promise<{ stdout: string; stderr: string; status: number | null }> {
  const { bindir } = findPostgresBinaries();
  const path = existsSync(join(bindir, "psql")) ? join(bindir, "psql") : "psql";
  const child = spawn(
    path,
    [
      ...["-X", "-v", "VERBOSITY=default"],
      ...["-h", "127.0.0.1", "-p", String(regions.proxy.port), "-U", "postgres", "-d", "postgres"],
      ...["-c", command],
    ],
    { env: { ...process.env, PGCONNECT_TIMEOUT: "10" } },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (status) => resolve({ stdout, stderr, status }));
  });
}

describe("maintenance commands through other clients", () => {
  it("psql prints one tag and a NOTICE per region", async () => {
    const before = await counter("vacuum_count");
    const result = await psql("VACUUM users");
    expect(result).toEqual({
      stdout: "VACUUM\n",
      stderr: finishedNotices("VACUUM")
        .map((message) => `NOTICE:  ${message}\n`)
        .join(""),
      status: 0,
    });
    expect(await counter("vacuum_count")).toEqual(plusOne(before));
  });

  it("postgres.js runs it with .simple()", async () => {
    const seen: string[] = [];
    const sql = postgres({
      host: "127.0.0.1",
      port: regions.proxy.port,
      user: "postgres",
      database: "postgres",
      max: 1,
      onnotice: (notice) => seen.push(String(notice["message"])),
    });
    try {
      const before = await counter("analyze_count");
      const result = await sql.unsafe("ANALYZE users").simple();
      expect(result.command).toBe("ANALYZE");
      expect(seen).toEqual(finishedNotices("ANALYZE"));
      expect(await counter("analyze_count")).toEqual(plusOne(before));
    } finally {
      await sql.end();
    }
  });
});

describe("maintenance commands steered or sent otherwise", () => {
  it("shows the plan in the console's ROUTE", async () => {
    const route = await client.query("ROUTE VACUUM users");
    expect(route.rows.map((row) => `${row.field}: ${row.value}`)).toEqual([
      "kind: Utility, ReadWrite, tables: users",
      "plan: in each region, one at a time, outside a transaction: ap-south, eu-west, us-east",
      "block: refused inside a transaction block, as PostgreSQL refuses it [25001]",
    ]);
  });

  it("runs in the hinted region alone", async () => {
    const before = await counter("vacuum_count");
    const answer = await run("/* geo: region=us-east */ VACUUM users");
    expect(answer.command).toBe("VACUUM");
    expect(answer.notices).toEqual([]);
    expect(await counter("vacuum_count")).toEqual({ ...before, "us-east": before["us-east"] + 1 });
  });

  it("refuses the extended protocol for a command across regions, and runs it nowhere", async () => {
    const before = await counter("vacuum_count");
    const lines = await exchange(Buffer.concat(extended("VACUUM users")));
    expect(lines[0]).toBe("ParseComplete");
    expect(lines[1]).toMatch(/^ErrorResponse 0A000 VACUUM runs in several regions/);
    expect(lines.at(-1)).toBe("ReadyForQuery I");
    expect(await counter("vacuum_count")).toEqual(before);
  });

  it("gives PostgreSQL's 25001 to the extended protocol inside a block, as a server does", async () => {
    expect(await exchange(encodeQuery({ sql: "BEGIN" }))).toEqual([
      "CommandComplete BEGIN",
      "ReadyForQuery T",
    ]);
    const lines = await exchange(Buffer.concat(extended("VACUUM users")));
    expect(lines.slice(1)).toEqual([
      "ErrorResponse 25001 VACUUM cannot run inside a transaction block",
      "ReadyForQuery E",
    ]);
    expect(await exchange(encodeQuery({ sql: "ROLLBACK" }))).toEqual([
      "CommandComplete ROLLBACK",
      "ReadyForQuery I",
    ]);
  });
});
