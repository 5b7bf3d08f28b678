import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";
import { sqlState } from "./support/sql-state.js";

// One backend connection, so whatever a client leaves on it is what the next client gets.
let region: OneRegion;

beforeAll(async () => {
  region = await startOneRegion({
    extraToml: "\n[pool]\nmax = 1\ncheckout_timeout_ms = 5000\n",
    initSql: "CREATE TABLE kept (x int); CREATE TABLE pairs (a int, b int);",
  });
});
afterAll(() => region?.close());

async function viaProxy(options: Partial<pg.ClientConfig> = {}): Promise<pg.Client> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: region.proxy.port,
    user: "postgres",
    database: "postgres",
    ...options,
  });
  await client.connect();
  return client;
}

/** The ways a session gets pinned to its backend connection. */
const PINS: Record<string, string> = {
  "a temp table": "CREATE TEMP TABLE pin_me (x int)",
  "an advisory lock": "SELECT pg_advisory_lock(42)",
  "a WITH HOLD cursor": "DECLARE held CURSOR WITH HOLD FOR SELECT 1",
};

describe("a failed transaction block in a pinned session", () => {
  for (const [pin, sql] of Object.entries(PINS)) {
    it(`rolls back everything after a failed statement (pinned by ${pin})`, async () => {
      const client = await viaProxy();
      try {
        await client.query("TRUNCATE kept");
        await client.query(sql);
        await client.query("BEGIN");
        expect(await sqlState(client.query("SELECT 1/0"))).toBe("22012");
        expect(await sqlState(client.query("INSERT INTO kept VALUES (1)"))).toBe("25P02");
        const end = await client.query("COMMIT");
        expect(end.command).toBe("ROLLBACK");
        expect((await client.query("SELECT count(*)::int AS n FROM kept")).rows[0].n).toBe(0);
      } finally {
        await client.end();
      }
    });
  }

  it("keeps a block begun in one string and failed in the next from committing", async () => {
    const client = await viaProxy();
    try {
      await client.query("TRUNCATE kept");
      await client.query(PINS["a temp table"]!.replace("pin_me", "pin_two"));
      await client.query("BEGIN; INSERT INTO kept VALUES (1)");
      expect(await sqlState(client.query("SELECT 1/0"))).toBe("22012");
      expect(await sqlState(client.query("INSERT INTO kept VALUES (2)"))).toBe("25P02");
      expect((await client.query("COMMIT")).command).toBe("ROLLBACK");
      expect((await client.query("SELECT count(*)::int AS n FROM kept")).rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it("runs a no-table statement inside the block, so a failure there fails the block", async () => {
    const client = await viaProxy();
    try {
      await client.query("TRUNCATE kept");
      await client.query("BEGIN");
      await client.query("INSERT INTO kept VALUES (1)");
      expect(await sqlState(client.query("SELECT 1/0"))).toBe("22012");
      expect((await client.query("COMMIT")).command).toBe("ROLLBACK");
      expect((await client.query("SELECT count(*)::int AS n FROM kept")).rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });
});

describe("a client that leaves while its statement runs", () => {
  it("never hands its busy backend connection to the next client", async () => {
    for (let round = 0; round < 3; round++) {
      const leaver = await viaProxy({ query_timeout: 200 });
      // Another client between the SET and the sleep makes the proxy replay the setting on the
      // connection first: its answer arrives while the sleep still runs.
      await leaver.query("SET work_mem = '8MB'");
      const between = await viaProxy();
      await between.query("SELECT 1");
      await between.end();
      // node-postgres gives up after query_timeout and the client leaves with the sleep still running.
      await leaver.query("SELECT pg_sleep(1.2)").catch(() => undefined);
      await leaver.end().catch(() => undefined);
      const next = await viaProxy();
      try {
        const answer = await next.query("SELECT 42 AS answer, current_setting('work_mem') AS work_mem");
        expect(answer.command).toBe("SELECT");
        expect(answer.rows).toEqual([{ answer: 42, work_mem: "4MB" }]);
      } finally {
        await next.end();
      }
    }
  });
});

describe("a client that vanishes mid-statement", () => {
  it("has its statement cancelled on the server and its connection never reused", async () => {
    const leaver = await viaProxy();
    leaver.on("error", () => undefined);
    const running = leaver.query("SELECT pg_sleep(30) AS orphan").catch(() => undefined);
    const direct = new pg.Client({ ...region.direct, user: "postgres", database: "postgres" });
    await direct.connect();
    try {
      const sleeping = async () =>
        (
          await direct.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30)%' AND state = 'active'",
          )
        ).rows[0].n as number;
      for (let i = 0; i < 100 && (await sleeping()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(await sleeping()).toBe(1);
      // The socket goes away without a Terminate, as when a process dies.
      (leaver as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      await running;
      const started = Date.now();
      while ((await sleeping()) > 0 && Date.now() - started < 5_000)
        await new Promise((r) => setTimeout(r, 50));
      expect(await sleeping()).toBe(0);
      const next = await viaProxy();
      try {
        expect((await next.query("SELECT 7 AS mine")).rows).toEqual([{ mine: 7 }]);
      } finally {
        await next.end();
      }
    } finally {
      await direct.end();
    }
  });
});

describe("a setting the proxy cannot replay on a fresh connection", () => {
  it("fails the client's statement instead of running it with other settings (another role)", async () => {
    const direct = new pg.Client({ ...region.direct, user: "postgres", database: "postgres" });
    await direct.connect();
    const client = await viaProxy();
    try {
      await direct.query(
        "DROP TABLE IF EXISTS kit_victim; CREATE TABLE kit_victim (x int); INSERT INTO kit_victim VALUES (1), (2), (3); DROP ROLE IF EXISTS kit_r; CREATE ROLE kit_r",
      );
      await client.query("SET ROLE kit_r");
      // Another client takes the only connection, so the next statement gets one that must be
      // given the client's role again: the role is gone by then.
      const other = await viaProxy();
      await other.query("SELECT 1");
      await other.end();
      await direct.query("DROP ROLE kit_r");
      expect(await sqlState(client.query("DELETE FROM kit_victim"))).toBeDefined();
      expect((await direct.query("SELECT count(*)::int AS n FROM kit_victim")).rows[0].n).toBe(3);
      // Every later statement needs the role too, so fails too; none runs without it.
      expect(await sqlState(client.query("TRUNCATE kit_victim"))).toBe("22023");
      expect((await direct.query("SELECT count(*)::int AS n FROM kit_victim")).rows[0].n).toBe(3);
    } finally {
      await client.end();
      await direct.end();
    }
  });
});

describe("a pooled connection whose last client's role was dropped", () => {
  /** A client sets a role and leaves; the only connection keeps it, and the role goes away. */
  async function leaveDroppedRole(direct: pg.Client, role: string): Promise<void> {
    const client = await viaProxy();
    try {
      await direct.query(`DROP ROLE IF EXISTS ${role}; CREATE ROLE ${role}`);
      await client.query(`SET ROLE ${role}`);
      expect((await client.query("SELECT current_user AS u")).rows[0].u).toBe(role);
    } finally {
      await client.end();
    }
    await direct.query(`DROP ROLE ${role}`);
  }

  it("does not refuse the next login, nor run another session's statements as that role", async () => {
    const direct = new pg.Client({ ...region.direct, user: "postgres", database: "postgres" });
    await direct.connect();
    const earlier = await viaProxy({ application_name: "logged in before the role was dropped" });
    try {
      await leaveDroppedRole(direct, "kit_gone");
      // A login not seen before, so the proxy checks its settings on the home region's connection.
      const next = await viaProxy({ application_name: "after the role was dropped" });
      expect((await next.query("SELECT current_user AS u")).rows[0].u).toBe("postgres");
      await next.end();
      await leaveDroppedRole(direct, "kit_gone_too");
      // A session's statement replays its own settings over the last client's first.
      expect((await earlier.query("SELECT current_user AS u")).rows[0].u).toBe("postgres");
    } finally {
      await earlier.end();
      await direct.end();
    }
  });
});

describe("a setting that changes part of itself", () => {
  it("follows the client to other connections as the whole value (SET DateStyle TO ymd after SQL)", async () => {
    const client = await viaProxy();
    try {
      await client.query("SET DateStyle TO SQL");
      await client.query("SET DateStyle TO YMD");
      // Another client in between: the next statement gets a connection the settings are replayed on.
      const other = await viaProxy();
      await other.query("SELECT 1");
      await other.end();
      const row = await client.query("SELECT current_setting('DateStyle') AS style");
      expect(row.rows).toEqual([{ style: "SQL, YMD" }]);
    } finally {
      await client.end();
    }
  });
});

/** Objects in the temporary schema of the server session a client is given. */
const TEMPORARY_OBJECTS = `SELECT
  (SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema())
  + (SELECT count(*) FROM pg_proc WHERE pronamespace = pg_my_temp_schema())
  + (SELECT count(*) FROM pg_statistic_ext WHERE stxnamespace = pg_my_temp_schema()) AS n`;

describe("a temporary object, however it is spelt", () => {
  // Each creates an object in the temporary schema and reads it back. Unpinned, the pooled
  // connection would keep the object for the next client, who would read this one's rows.
  const FORMS: Record<string, { create: string[]; read: string }> = {
    "a table qualified by pg_temp": {
      create: ["CREATE TABLE pg_temp.t_q AS SELECT 'secret'::text AS v"],
      read: "SELECT v FROM t_q",
    },
    "SELECT INTO TEMP": {
      create: ["SELECT 'secret'::text AS v INTO TEMP t_into"],
      read: "SELECT v FROM t_into",
    },
    "a function in pg_temp": {
      create: ["CREATE FUNCTION pg_temp.f_q() RETURNS text LANGUAGE sql AS $$SELECT 'secret'$$"],
      read: "SELECT pg_temp.f_q() AS v",
    },
    "statistics in pg_temp": {
      create: ["CREATE STATISTICS pg_temp.st_q ON a, b FROM pairs"],
      read: "SELECT 'secret' AS v FROM pg_statistic_ext WHERE stxname = 'st_q'",
    },
    "a table created under a search_path naming pg_temp": {
      create: ["SET search_path = pg_temp, public", "CREATE TABLE t_path AS SELECT 'secret'::text AS v"],
      read: "SELECT v FROM pg_temp.t_path",
    },
  };
  for (const [form, { create, read }] of Object.entries(FORMS)) {
    it(`stays with the session that made it: ${form}`, async () => {
      const maker = await viaProxy();
      try {
        for (const sql of create) await maker.query(sql);
        expect((await maker.query(read)).rows).toEqual([{ v: "secret" }]);
      } finally {
        await maker.end();
      }
      // One pooled connection: the next client gets the one the maker used, reset.
      const next = await viaProxy();
      try {
        expect((await next.query(TEMPORARY_OBJECTS)).rows[0].n).toBe("0");
      } finally {
        await next.end();
      }
    });
  }
});
