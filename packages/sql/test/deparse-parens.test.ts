import { beforeAll, describe, expect, it } from "vitest";
import { deparse, RewriteMismatch } from "../src/deparse.js";
import { initSql } from "../src/index.js";
import { parseOne } from "../src/parser.js";

beforeAll(() => initSql());

// Each statement must come back as a text PostgreSQL reads as the same statement.
const STATEMENTS = [
  "SELECT count(*) FROM orders o WHERE (NOT (o.buyer <> 6)) IS NULL",
  "SELECT count(*) FROM orders o WHERE (o.buyer = 6 AND o.id = 1) IS NULL",
  "SELECT count(*) FROM orders o WHERE (NOT (o.buyer <> 6)) IS TRUE",
  "SELECT count(*) FROM orders o WHERE (o.buyer > 1) IS NOT FALSE",
  "SELECT u.id FROM users u WHERE (u.id NOT IN (SELECT o.id FROM orders o)) IS NULL",
  "SELECT c.code FROM currencies c WHERE (NOT EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = c.name)) IS UNKNOWN",
  "SELECT a IS NULL, f(a) IS NOT NULL, (a + 1) IS NULL, ((a IS NULL) IS NULL) FROM t",
];

describe("deparse", () => {
  it.each(STATEMENTS)("reads back %s as the same statement", (sql) => {
    expect(() => deparse(parseOne(sql)!)).not.toThrow();
  });
});

describe("a rewrite that would not read back as written", () => {
  // The printer drops the [] after "char": the text would cast to another type.
  it("is refused rather than run", () => {
    expect(() => deparse(parseOne('SELECT CAST($1 AS "char"[])')!)).toThrow(RewriteMismatch);
  });
});
