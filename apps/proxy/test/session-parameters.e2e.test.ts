import { MemoryDirectory, parseConfig } from "@geo/core";
import { encodeQuery, PgError } from "@geo/proto";
import { type PgCluster, RawClient, startCluster } from "@geo/testkit";
import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningProxy, startProxy } from "../src/index.js";
import { txnSection } from "./support/txn-data-dir.js";

/**
 * Everything a client can observe about its session settings, through geoproxy in one-region
 * mode and straight to the same PostgreSQL server, side by side: the ParameterStatus messages of
 * the login and of each statement, and what SHOW answers. The proxy has one pooled connection: with
 * `interleave`, another client with other settings uses it between two statements, so each
 * statement runs after the proxy replayed the client's settings on it (and undid the other's).
 */

let cluster: PgCluster;
let proxy: RunningProxy;

beforeAll(async () => {
  cluster = await startCluster({
    initSql: "CREATE ROLE app_user LOGIN; CREATE DATABASE shop OWNER app_user;",
  });
  const server = cluster.servers[0]!;
  const config = parseConfig(
    `[server]
host = "127.0.0.1"
port = 0

[[topology.regions]]
id = "solo"
home = true
primary = { host = "127.0.0.1", port = ${server.port}, database = "shop" }

[routing]
default_placement = { placement = "pinned", region = "solo" }

[pool]
max = 1
checkout_timeout_ms = 2000
${txnSection()}`,
    "one-region.toml",
  );
  proxy = await startProxy({
    config,
    directory: new MemoryDirectory([]),
    logLevel: (process.env["GEO_LOG"] as "silent" | undefined) ?? "silent",
    port: 0,
    shutdownTimeoutMs: 500,
  });
});

afterAll(async () => {
  await proxy?.close({ timeoutMs: 200 });
  await cluster?.stop();
});

type Target = "proxy" | "direct";

interface Watched {
  readonly client: pg.Client;
  /** ParameterStatus messages received since the last `take()`. */
  take(): [string, string][];
}

async function open(target: Target, options: Partial<pg.ClientConfig> = {}): Promise<Watched> {
  const port = target === "proxy" ? proxy.port : cluster.servers[0]!.port;
  const client = new pg.Client({ host: "127.0.0.1", port, user: "app_user", database: "shop", ...options });
  let seen: [string, string][] = [];
  const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
  connection.on("parameterStatus", (message: { parameterName: string; parameterValue: string }) => {
    seen.push([message.parameterName, message.parameterValue]);
  });
  await client.connect();
  return {
    client,
    take() {
      const taken = seen;
      seen = [];
      return taken;
    },
  };
}

interface ScriptOptions {
  readonly client?: Partial<pg.ClientConfig>;
  /** Between two statements, another client with other settings runs one. */
  readonly interleave?: boolean;
}

/** Runs each statement, recording its outcome and the ParameterStatus messages it brought. */
async function script(target: Target, statements: readonly string[], options: ScriptOptions = {}) {
  const watched = await open(target, options.client);
  const other = options.interleave
    ? await open(target, {
        application_name: "other",
        options: "-c TimeZone=America/Lima -c DateStyle=German -c other.var=1",
      })
    : null;
  const log: unknown[] = [["login", sorted(watched.take())]];
  try {
    for (const sql of statements) {
      let outcome: unknown;
      try {
        const result = await watched.client.query(sql);
        outcome = Array.isArray(result) ? result.map((r) => r.rows) : result.rows;
      } catch (error) {
        outcome = `error ${(error as { code?: string }).code}: ${(error as Error).message}`;
      }
      log.push([sql, outcome, watched.take()]);
      if (other !== null) {
        const { rows } = await other.client.query("SELECT current_setting('TimeZone') AS tz");
        expect(rows).toEqual([{ tz: "America/Lima" }]);
      }
    }
  } finally {
    await watched.client.end();
    await other?.client.end();
  }
  return log;
}

function sorted(pairs: [string, string][]): [string, string][] {
  return [...pairs].sort(([a], [b]) => a.localeCompare(b));
}

/** The same script through the proxy and straight to the server gives the same log. */
async function expectSame(statements: readonly string[], options: ScriptOptions = {}) {
  const direct = await script("direct", statements, options);
  const proxied = await script("proxy", statements, options);
  expect(proxied).toEqual(direct);
}

describe("the login", () => {
  it("reports the client's own application_name, user and startup values as the server normalises them", async () => {
    const shows = [
      "SHOW application_name",
      "SHOW client_encoding",
      "SHOW DateStyle",
      "SHOW TimeZone",
      "SHOW IntervalStyle",
      "SHOW session_authorization",
      "SHOW is_superuser",
      "SELECT current_user, session_user",
    ];
    await expectSame(shows);
    await expectSame(shows, {
      client: {
        client_encoding: "eucjp",
        options: "-c datestyle=iso,dmy -c timezone=asia/tokyo -c intervalstyle=ISO_8601",
      },
    });
    await expectSame(shows, { client: { application_name: "checkout" }, interleave: true });
  });
});

describe("settings replayed on a pooled connection", () => {
  it("quotes names that are keywords or mixed case, and values with quotes and backslashes", async () => {
    await expectSame(
      [
        "SELECT current_setting('some.var') AS v",
        "SELECT set_config('select.Mixed', 'it''s', false) AS v",
        `SET "Some"."Other" = 'a''b\\c'`,
        "SELECT current_setting('some.var') a, current_setting('select.mixed') b, current_setting('some.other') c",
        `RESET "some".var`,
        "SELECT current_setting('some.var') AS v",
        "SELECT set_config('with space.x', 'y', false) AS v",
        "SELECT current_setting('with space.x') AS v",
      ],
      { client: { options: "-c some.var=it's\\ x" }, interleave: true },
    );
  });
});

describe("RESET", () => {
  it("returns to the values the client connected with, as PostgreSQL does for startup options", async () => {
    await expectSame(
      [
        "SET application_name = 'changed'",
        "SET TimeZone = 'UTC'",
        "SET search_path = pg_catalog",
        "RESET application_name",
        "SHOW application_name",
        "RESET application_name",
        "RESET ALL",
        "SELECT current_setting('TimeZone') tz, current_setting('search_path') sp, current_setting('application_name') app",
        "SET TimeZone = 'Europe/Paris'",
        "SET application_name = 'again'",
        "DISCARD ALL",
        "SELECT current_setting('TimeZone') tz, current_setting('application_name') app",
        "SET DateStyle = 'SQL'",
        "RESET DateStyle",
        "SHOW DateStyle",
      ],
      {
        client: { application_name: "startup-app", options: "-c TimeZone=Asia/Tokyo -c search_path=public" },
        interleave: true,
      },
    );
  });
});

describe("RESET inside a longer query string", () => {
  const statements = [
    "SET application_name = 'x'; RESET application_name; SELECT current_setting('application_name') AS app",
    "SHOW application_name",
  ];
  const client = { application_name: "startup-app" };

  it("leaves the next statement with the startup value", async () => {
    const log = await script("proxy", statements, { client, interleave: true });
    expect(log.at(-1)).toEqual([
      "SHOW application_name",
      [{ application_name: "startup-app" }],
      expect.anything(),
    ]);
  });

  // A string sent whole to one region would run its RESET as written, giving the pooled
  // connection's reset value (application_name "geoproxy", backend-pool-set.ts) instead of the
  // startup value: such a string runs statement by statement (simple-query.ts).
  it("answers as PostgreSQL inside the string, and leaves the client told the same values", async () => {
    const told = (log: unknown[]) => {
      // The values the client holds after each exchange: the login's, then each change applied.
      const values = new Map<string, string>();
      return log.map((entry) => {
        const [what, second, third] = entry as [string, unknown, [string, string][] | undefined];
        for (const [name, value] of (what === "login" ? second : third) as [string, string][])
          values.set(name, value);
        return [what, what === "login" ? null : second, Object.fromEntries(values)];
      });
    };
    const direct = await script("direct", statements, { client });
    const proxied = await script("proxy", statements, { client });
    expect(told(proxied)).toEqual(told(direct));
  });

  it("reports ParameterStatus exactly as PostgreSQL inside the string", async () => {
    await expectSame(statements, { client });
  });
});

describe("ParameterStatus of a query string the proxy runs statement by statement", () => {
  /**
   * Every message of each exchange in order, as a bare client sees it: PostgreSQL reports the
   * settings a string changed once, just before its ReadyForQuery, each only if its value differs
   * from the one last reported. A RESET of a startup setting makes the proxy run the string one
   * statement at a time (simple-query.ts), each answered by the server with its own reports.
   */
  async function exchanges(target: Target, strings: readonly string[]): Promise<unknown[]> {
    const client = await RawClient.connect({
      host: "127.0.0.1",
      port: target === "proxy" ? proxy.port : cluster.servers[0]!.port,
      user: "app_user",
      database: "shop",
      parameters: { application_name: "startup-app", options: "-c TimeZone=Asia/Tokyo" },
    });
    const log: unknown[] = [];
    try {
      for (const sql of strings) {
        client.send(encodeQuery({ sql }));
        const messages: unknown[] = [];
        for (;;) {
          const message = await client.next();
          if (message.type === "ParameterStatus") messages.push(["S", message.name, message.value]);
          else if (message.type === "CommandComplete") messages.push(["C", message.tag]);
          else if (message.type === "DataRow")
            messages.push(["D", ...message.values.map((v) => v?.toString())]);
          else if (message.type === "ErrorResponse")
            messages.push(["E", PgError.fromFields(message.fields).code]);
          else if (message.type === "ReadyForQuery") {
            messages.push(["Z", message.status]);
            break;
          } else messages.push([message.type]);
        }
        log.push([sql, messages]);
      }
    } finally {
      await client.close();
    }
    return log;
  }

  it("sends one report per changed setting at the string's end, none for a value back to the one told", async () => {
    const strings = [
      "SET application_name = 'x'; RESET application_name; SELECT current_setting('application_name') AS app",
      "SET TimeZone = 'UTC'; RESET application_name; SET DateStyle = 'SQL, DMY'; SELECT 1 AS one",
      "RESET TimeZone; SELECT set_config('application_name', 'fn', false) AS v; SET application_name = 'last'",
      "SET application_name = 'doomed'; RESET TimeZone; SELECT 1 / 0",
      "SHOW application_name",
      "SET TimeZone = 'Europe/Paris'; RESET TimeZone; SET TimeZone = 'Europe/Paris'",
      "RESET application_name; SELECT current_setting('TimeZone') AS tz",
    ];
    const direct = await exchanges("direct", strings);
    // The script reaches every case: a report after the rows, one left out, one rolled back.
    expect(JSON.stringify(direct)).toContain('["S","DateStyle","SQL, DMY"]');
    expect(JSON.stringify(direct)).toContain('["E","22012"]');
    expect(await exchanges("proxy", strings)).toEqual(direct);
  });
});

describe("ParameterStatus", () => {
  it("follows SET, SET LOCAL, set_config, ROLLBACK and savepoints as PostgreSQL sends it", async () => {
    await expectSame([
      "SET TimeZone = 'Asia/Tokyo'",
      "SET TimeZone = 'Asia/Tokyo'",
      "BEGIN",
      "SET LOCAL TimeZone = 'Europe/Paris'",
      "SHOW TimeZone",
      "COMMIT",
      "BEGIN",
      "SET application_name = 'in-block'",
      "ROLLBACK",
      "BEGIN",
      "SELECT set_config('DateStyle', 'SQL, DMY', true) AS v",
      "COMMIT",
      "SELECT set_config('IntervalStyle', 'iso_8601', false) AS v",
      "SELECT set_config('TimeZone', 'America/New_York', true) AS v",
      "BEGIN",
      "SET application_name = 'before'",
      "SAVEPOINT s",
      "SET application_name = 'after'",
      "ROLLBACK TO SAVEPOINT s",
      "COMMIT",
      "SHOW application_name",
      "SET LOCAL TimeZone = 'UTC'",
      "BEGIN",
      "SET LOCAL TimeZone = 'UTC'",
      "RESET TimeZone",
      "ROLLBACK",
      "BEGIN; SET LOCAL DateStyle = 'German'; COMMIT",
      "SET TimeZone = 'UTC'; SELECT 1 AS one",
    ]);
  });

  it("is not sent for the proxy's own replays, and is sent for every change the client makes", async () => {
    await expectSame(
      [
        "SET TimeZone = 'Asia/Tokyo'",
        "SELECT 1 AS one",
        "SET DateStyle = 'ISO, DMY'",
        "SELECT set_config('application_name', 'mine', false) AS v",
        "SHOW application_name",
        "RESET TimeZone",
        "SHOW TimeZone",
      ],
      { interleave: true },
    );
  });
});

describe("standard_conforming_strings", () => {
  it("replays values with backslashes the same under standard_conforming_strings = off", async () => {
    await expectSame(
      [
        "SET standard_conforming_strings = off",
        "SELECT set_config('custom.path', E'c:\\\\dir', false) AS v",
        "SELECT current_setting('custom.path') AS v",
        "SET standard_conforming_strings = on",
        "SELECT current_setting('custom.path') AS v",
      ],
      { interleave: true },
    );
  });

  // libpg-query's scanner always reads literals with standard_conforming_strings = on: with one
  // region a statement it cannot read goes to the server as it is, which reads it as it should.
  it("reads backslash escapes in literals when off, as PostgreSQL does", async () => {
    await expectSame([
      "SET standard_conforming_strings = off",
      "SELECT 'a\\'b' AS v",
      "SELECT 'c\\\\d' AS v, E'e\\tf' AS w",
      "SET standard_conforming_strings = on",
      "SELECT 'a\\b' AS v",
    ]);
  });
});

describe("the extended protocol (postgres.js)", () => {
  async function run(target: Target, withParameters: boolean): Promise<unknown[]> {
    const port = target === "proxy" ? proxy.port : cluster.servers[0]!.port;
    const sql = postgres({
      host: "127.0.0.1",
      port,
      user: "app_user",
      database: "shop",
      max: 1,
      connection: { application_name: "pjs", TimeZone: "Asia/Tokyo" },
      onnotice: () => undefined,
    });
    const log: unknown[] = [];
    const step = async (text: string, params: string[] = []) => {
      const rows = await sql.unsafe(text, params).catch((error: Error) => error.message);
      log.push([text, Array.isArray(rows) ? [...rows] : rows, withParameters ? { ...sql.parameters } : {}]);
    };
    try {
      await step("SELECT 1 AS one");
      await step("SELECT set_config('TimeZone', $1, false) AS v", ["Europe/Paris"]);
      await step("SET application_name = 'changed'");
      await step("RESET application_name");
      await step("SELECT current_setting('application_name') AS app, current_setting('TimeZone') AS tz");
      await step("RESET ALL");
      await step("SELECT current_setting('TimeZone') AS tz");
      await step("SELECT set_config('DateStyle', $1, true) AS v", ["SQL, DMY"]);
      await sql
        .begin(async (tx) => {
          await tx`SET TimeZone = 'UTC'`;
          throw new Error("roll back");
        })
        .catch(() => undefined);
      await step("SELECT current_setting('TimeZone') AS tz, current_setting('DateStyle') AS ds");
    } finally {
      await sql.end();
    }
    return log;
  }

  it("answers SHOW and current_setting as PostgreSQL after RESET, RESET ALL, set_config and a rolled back SET", async () => {
    const direct = await run("direct", false);
    expect(await run("proxy", false)).toEqual(direct);
  });

  // PostgreSQL reports a change made in the extended protocol before the ReadyForQuery of Sync.
  it("reports the same ParameterStatus values at each Sync", async () => {
    const direct = await run("direct", true);
    expect(await run("proxy", true)).toEqual(direct);
  });
});
