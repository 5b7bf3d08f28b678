import {
  encodeBind,
  encodeCopyData,
  encodeCopyDone,
  encodeCopyFail,
  encodeDescribe,
  encodeExecute,
  encodeParse,
  encodeQuery,
  encodeSync,
} from "@geo/proto";
import { RawClient } from "@geo/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OneRegion, startOneRegion } from "./support/one-region.js";
import { exchange, type SideBySide, sideBySide } from "./support/side-by-side.js";

// Every exchange here runs straight against PostgreSQL and through geoproxy in one-region mode;
// the client must read the same messages both ways.
let region: OneRegion;
let pair: SideBySide;

beforeAll(async () => {
  region = await startOneRegion({
    initSql:
      "CREATE DATABASE second_db;\nCREATE TABLE loaded (id int, name text);\nCREATE TABLE deferred_parent (id int PRIMARY KEY);\nCREATE TABLE deferred_child (parent int REFERENCES deferred_parent DEFERRABLE INITIALLY DEFERRED);\nCREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 5) g;",
  });
  pair = await sideBySide(region.direct, region.proxy.port);
});
afterAll(async () => {
  await pair?.close();
  await region?.close();
});

/** Parse, Bind and Execute of one statement with the unnamed statement and portal, as pipelines send them. */
function step(sql: string, describe = false): Buffer[] {
  return [
    encodeParse({ name: "", sql, paramTypes: [] }),
    encodeBind({ portal: "", statement: "", paramFormats: [], params: [], resultFormats: [] }),
    ...(describe ? [encodeDescribe({ target: "P", name: "" })] : []),
    encodeExecute({ portal: "", maxRows: 0 }),
  ];
}

async function same(bytes: Buffer, readies = 1): Promise<string[]> {
  const [direct, proxied] = await pair.both(bytes, readies);
  expect(proxied).toEqual(direct);
  return direct;
}

describe("extended protocol, as libpq's pipeline mode uses it", () => {
  it("answers a pipeline whose transaction fails at its first statement", async () => {
    const lines = await same(
      Buffer.concat([
        ...step("BEGIN"),
        ...step("SELECT no_such_column", true),
        ...step("CREATE TABLE voila ()"),
        ...step("COMMIT"),
        encodeSync(),
      ]),
    );
    expect(lines.at(-1)).toBe("ReadyForQuery E");
    await same(Buffer.concat([...step("ROLLBACK"), encodeSync()]));
  });

  it("lets ROLLBACK TO end a failed block for the statements batched behind it (psycopg's nested exit)", async () => {
    await same(Buffer.concat([...step("BEGIN"), ...step("SAVEPOINT s"), encodeSync()]));
    await same(Buffer.concat([...step("SELECT 1 FROM no_such_table"), encodeSync()]));
    const lines = await same(Buffer.concat([...step("ROLLBACK TO s"), ...step("RELEASE s"), encodeSync()]));
    expect(lines).toContain("CommandComplete RELEASE");
    expect(lines.at(-1)).toBe("ReadyForQuery T");
    await same(Buffer.concat([...step("ROLLBACK"), encodeSync()]));
  });

  it("runs statements batched behind the ROLLBACK of a failed block after it, as the server does", async () => {
    await same(Buffer.concat([...step("BEGIN"), encodeSync()]));
    await same(Buffer.concat([...step("SELECT 1 FROM no_such_table"), encodeSync()]));
    const lines = await same(Buffer.concat([...step("ROLLBACK"), ...step("SELECT 1"), encodeSync()]));
    expect(lines).toContain("CommandComplete SELECT 1");
    expect(lines.at(-1)).toBe("ReadyForQuery I");
  });

  it("reports a statement the server cannot parse at Parse, not later", async () => {
    const lines = await same(
      Buffer.concat([encodeParse({ name: "", sql: "SELEC 1", paramTypes: [] }), encodeSync()]),
    );
    expect(lines[0]).toBe("ErrorResponse 42601");
  });

  it("reports an unknown table at Parse", async () => {
    await same(
      Buffer.concat([
        encodeParse({ name: "s_missing", sql: "SELECT * FROM no_such_table", paramTypes: [] }),
        encodeDescribe({ target: "S", name: "s_missing" }),
        encodeSync(),
      ]),
    );
  });
});

describe("transaction control", () => {
  it("prepares an empty transaction as PostgreSQL does", async () => {
    await same(encodeQuery({ sql: "BEGIN" }));
    // One server behind both: each side prepares under its own name.
    const direct = await exchange(
      pair.direct,
      encodeQuery({ sql: "PREPARE TRANSACTION 'geo_empty_direct'" }),
    );
    const proxied = await exchange(
      pair.proxied,
      encodeQuery({ sql: "PREPARE TRANSACTION 'geo_empty_proxied'" }),
    );
    expect(proxied).toEqual(direct);
    expect(direct[0]).toBe("CommandComplete PREPARE TRANSACTION");
    expect((await pair.proxied.query("COMMIT PREPARED 'geo_empty_proxied'")).error).toBeUndefined();
    expect((await pair.direct.query("COMMIT PREPARED 'geo_empty_direct'")).error).toBeUndefined();
  });
});

describe("describing what psql's \\gdesc describes", () => {
  it("describes EXECUTE of a statement prepared in SQL with its columns", async () => {
    await same(encodeQuery({ sql: "PREPARE described AS SELECT 1 AS first, 2 AS second" }));
    const lines = await same(
      Buffer.concat([
        encodeParse({ name: "", sql: "EXECUTE described", paramTypes: [] }),
        encodeDescribe({ target: "S", name: "" }),
        encodeSync(),
      ]),
    );
    expect(lines.some((line) => line.startsWith("RowDescription"))).toBe(true);
    await same(encodeQuery({ sql: "DEALLOCATE described" }));
  });

  it("parses and describes an empty statement in a failed block, as PostgreSQL does", async () => {
    await same(encodeQuery({ sql: "BEGIN" }));
    await same(encodeQuery({ sql: "SELECT 1/0" }));
    await same(
      Buffer.concat([
        encodeParse({ name: "", sql: "", paramTypes: [] }),
        encodeDescribe({ target: "S", name: "" }),
        encodeSync(),
      ]),
    );
    await same(encodeQuery({ sql: "ROLLBACK" }));
  });
});

describe("cursors declared in SQL", () => {
  it("are portals a client can Describe and Execute", async () => {
    await same(encodeQuery({ sql: "BEGIN; DECLARE c CURSOR FOR SELECT id, name FROM items ORDER BY id" }));
    await same(
      Buffer.concat([
        encodeDescribe({ target: "P", name: "c" }),
        encodeExecute({ portal: "c", maxRows: 2 }),
        encodeExecute({ portal: "c", maxRows: 2 }),
        encodeSync(),
      ]),
    );
    await same(encodeQuery({ sql: "COMMIT" }));
  });
});

describe("COPY", () => {
  const rows = (text: string) => encodeCopyData({ data: Buffer.from(text) });

  it("loads rows with COPY FROM STDIN, in text and CSV, the data sent behind the statement", async () => {
    // Sent in one write, as libpq does once the server asked: the data may arrive with the statement.
    const lines = await same(
      Buffer.concat([
        encodeQuery({ sql: "COPY loaded FROM STDIN" }),
        rows("1\tone\n2\t\\N\n"),
        encodeCopyDone(),
      ]),
    );
    expect(lines).toContain("CommandComplete COPY 2");
    await same(
      Buffer.concat([
        encodeQuery({ sql: "COPY loaded (id, name) FROM STDIN WITH (FORMAT csv, HEADER true)" }),
        rows('id,name\n3,"th,ree"\n'),
        rows("4,four\n"),
        encodeCopyDone(),
      ]),
    );
    // Each side loaded its rows into the one server: both see all eight.
    const [direct, proxied] = await pair.both(
      encodeQuery({ sql: "SELECT count(*), count(name) FROM loaded" }),
    );
    expect(proxied).toEqual(direct);
    expect(direct).toContain('DataRow ["8","6"]');
  });

  it("reports bad data and keeps the session usable", async () => {
    const lines = await same(
      Buffer.concat([encodeQuery({ sql: "COPY loaded FROM STDIN" }), rows("x\tbad\n"), encodeCopyDone()]),
    );
    expect(lines).toContain("ErrorResponse 22P02");
    await same(encodeQuery({ sql: "SELECT 1" }));
  });

  it("stops at CopyFail with the client's message", async () => {
    const lines = await same(
      Buffer.concat([
        encodeQuery({ sql: "COPY loaded FROM STDIN" }),
        rows("9\tnine\n"),
        encodeCopyFail({ message: "changed my mind" }),
      ]),
    );
    expect(lines).toContain("ErrorResponse 57014");
  });

  it("loads rows inside a transaction block and rolls them back with it", async () => {
    await same(encodeQuery({ sql: "BEGIN" }));
    await same(
      Buffer.concat([encodeQuery({ sql: "COPY loaded FROM STDIN" }), rows("10\tten\n"), encodeCopyDone()]),
    );
    await same(encodeQuery({ sql: "ROLLBACK" }));
    const [direct, proxied] = await pair.both(
      encodeQuery({ sql: "SELECT count(*) FROM loaded WHERE id = 10" }),
    );
    expect(proxied).toEqual(direct);
    expect(direct).toContain('DataRow ["0"]');
  });

  it("copies rows out with COPY TO STDOUT", async () => {
    await same(
      encodeQuery({ sql: "COPY (SELECT id, name FROM items ORDER BY id) TO STDOUT WITH (FORMAT csv)" }),
    );
  });
});

describe("the database a client names", () => {
  it("refuses a database that does not exist with 3D000, as PostgreSQL does", async () => {
    const attempt = RawClient.connect({
      host: "127.0.0.1",
      port: region.proxy.port,
      user: "postgres",
      database: "no_such_database",
      timeoutMs: 5_000,
    });
    await expect(attempt).rejects.toMatchObject({ code: "3D000" });
  });

  it("opens the database the client names", async () => {
    const client = await RawClient.connect({
      host: "127.0.0.1",
      port: region.proxy.port,
      user: "postgres",
      database: "second_db",
      timeoutMs: 5_000,
    });
    try {
      expect((await client.query("SELECT current_database()")).rows).toEqual([["second_db"]]);
      // Its tables are that database's: the first one's are not there.
      expect((await client.query("SELECT count(*) FROM items")).error?.code).toBe("42P01");
    } finally {
      await client.close();
    }
    expect((await pair.proxied.query("SELECT current_database()")).rows).toEqual([["postgres"]]);
  });
});

describe("a batch outside a transaction block", () => {
  it("reports the failure of its implicit COMMIT at Sync (a deferred constraint)", async () => {
    const lines = await same(
      Buffer.concat([...step("INSERT INTO deferred_child VALUES (42)"), encodeSync()]),
    );
    expect(lines).toContain("ErrorResponse 23503");
  });
});

describe("SQL-level prepared statements", () => {
  it("are prepared, executed and deallocated as on the server", async () => {
    await same(encodeQuery({ sql: "PREPARE by_id (int) AS SELECT name FROM items WHERE id = $1" }));
    const lines = await same(encodeQuery({ sql: "EXECUTE by_id(2)" }));
    expect(lines).toContain('DataRow ["item 2"]');
    await same(encodeQuery({ sql: "DEALLOCATE by_id" }));
    await same(encodeQuery({ sql: "EXECUTE by_id(2)" }));
  });
});

describe("a Query the proxy's parser cannot read", () => {
  it("gets PostgreSQL's own error, hint and position", async () => {
    const lines = await same(encodeQuery({ sql: "SELECT (1" }));
    expect(lines[0]).toBe("ErrorResponse 42601");
    const direct = await pair.direct.query("SELECT U&'\\wxyz'");
    const proxied = await pair.proxied.query("SELECT U&'\\wxyz'");
    expect(proxied.error?.message).toBe(direct.error?.message);
    expect(proxied.error?.hint).toBe(direct.error?.hint);
    expect(proxied.error?.position).toBe(direct.error?.position);
  });

  it("runs what the server reads: a literal with standard_conforming_strings off", async () => {
    await same(encodeQuery({ sql: "SET standard_conforming_strings = off" }));
    const lines = await same(encodeQuery({ sql: "SELECT 'a\\'b' AS v" }));
    expect(lines).toContain(`DataRow ["a'b"]`);
    await same(encodeQuery({ sql: "RESET standard_conforming_strings" }));
  });
});

describe("AND CHAIN", () => {
  it("begins the next block with the same characteristics, after a commit and after a failed block", async () => {
    await same(encodeQuery({ sql: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY" }));
    await same(encodeQuery({ sql: "SELECT count(*) FROM items" }));
    await same(encodeQuery({ sql: "COMMIT AND CHAIN" }));
    const isolation = await same(encodeQuery({ sql: "SHOW transaction_isolation" }));
    expect(isolation).toContain('DataRow ["repeatable read"]');
    await same(encodeQuery({ sql: "SELECT 1/0" }));
    await same(encodeQuery({ sql: "COMMIT AND CHAIN" }));
    await same(encodeQuery({ sql: "SHOW transaction_read_only" }));
    await same(encodeQuery({ sql: "ROLLBACK AND CHAIN" }));
    const last = await same(encodeQuery({ sql: "COMMIT" }));
    expect(last.at(-1)).toBe("ReadyForQuery I");
    // With no block to chain from, an error (25P01), not a warning.
    const outside = await same(encodeQuery({ sql: "COMMIT AND CHAIN" }));
    expect(outside[0]).toBe("ErrorResponse 25P01");
    await same(encodeQuery({ sql: "ROLLBACK AND CHAIN" }));
  });
});
