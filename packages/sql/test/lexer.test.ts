import { describe, expect, it } from "vitest";
import { lex, shapeSql } from "../src/lexer.js";

describe("the cache-key lexer", () => {
  it("gives statements that differ only in literals the same shape key", () => {
    const a = lex("SELECT * FROM users WHERE tenant_id = 'alice' AND n = 1");
    const b = lex("SELECT * FROM users WHERE tenant_id = 'bob' AND n = 22");
    expect(a.shapeKey).toBe(b.shapeKey);
    expect(a.literals).toEqual([
      { kind: "string", text: "alice" },
      { kind: "integer", text: "1" },
    ]);
  });

  it("keeps the sign of a negative number with its literal, so -1 never becomes 1", () => {
    expect(lex("SELECT * FROM t WHERE id = -1").literals).toEqual([{ kind: "integer", text: "-1" }]);
    expect(lex("SELECT * FROM t WHERE id=-1").literals).toEqual([{ kind: "integer", text: "-1" }]);
    expect(lex("SELECT a - 1 FROM t").literals).toEqual([{ kind: "integer", text: "1" }]);
    expect(lex("SELECT a - 1 FROM t").shapeKey).toContain("a - ");
  });

  it("does not fold a minus into a literal that a cast or subscript binds first", () => {
    expect(lex("SELECT -1::int8").shapeKey).toBe("SELECT -\u0000i::int8");
    expect(lex("SELECT -1 ::int8").literals).toEqual([{ kind: "integer", text: "1" }]);
    expect(lex("SELECT -1[1]").literals).toEqual([
      { kind: "integer", text: "1" },
      { kind: "integer", text: "1" },
    ]);
    expect(lex("SELECT 1::int8").literals).toEqual([{ kind: "integer", text: "1" }]);
  });

  it("normalises numbers as PostgreSQL's grammar stores them", () => {
    expect(lex("SELECT 007").literals).toEqual([{ kind: "integer", text: "7" }]);
    expect(lex("SELECT 2147483648").literals).toEqual([{ kind: "numeric", text: "2147483648" }]);
    expect(lex("SELECT -2147483648").literals).toEqual([{ kind: "numeric", text: "-2147483648" }]);
    expect(lex("SELECT 1.50, .5, 1e3").literals.map((l) => l.text)).toEqual(["1.50", ".5", "1e3"]);
  });

  it("leaves forms it cannot normalise exactly in the key", () => {
    for (const sql of [
      "SELECT 0x1F",
      "SELECT 1_000",
      "SELECT E'a\\'b'",
      "SELECT B'101'",
      "SELECT X'1f'",
      "SELECT U&'d\\0061t'",
    ]) {
      expect(lex(sql).literals).toEqual([]);
      expect(lex(sql).shapeKey).toBe(sql);
    }
  });

  it("does not lift a literal that follows a type name", () => {
    expect(lex("SELECT interval '1 day', date '2026-01-01'").literals).toEqual([]);
  });

  it("reads a $9 inside a dollar-quoted string as text, not as a parameter", () => {
    const lexed = lex("SELECT $$ $9 $$ FROM users WHERE tenant_id = $1");
    expect(lexed.maxParam).toBe(1);
    expect(lexed.literals).toEqual([{ kind: "string", text: " $9 " }]);
    expect(lex("SELECT $tag$ it's $5 $$ $tag$ WHERE a = $2").maxParam).toBe(2);
  });

  it("ignores quotes, parameters and semicolons inside strings, identifiers and comments", () => {
    const lexed = lex(`SELECT 'a;b', "c;$4" /* ; $7 */ -- $8 ;\nFROM t WHERE x = $3`);
    expect(lexed.maxParam).toBe(3);
    expect(lexed.multiple).toBe(false);
    expect(lexed.literals).toEqual([{ kind: "string", text: "a;b" }]);
  });

  it("drops comments from the key and keeps the first leading comment for hints", () => {
    const a = lex("/* geo: key=a */ SELECT 1");
    const b = lex("/* geo: key=b */ SELECT 1");
    expect(a.shapeKey).toBe(b.shapeKey);
    expect(a.leadingComment).toBe(" geo: key=a ");
    expect(lex("SELECT /* geo: key=a */ 1").leadingComment).toBeUndefined();
    expect(lex("/* outer /* nested */ still */ SELECT 1").leadingComment).toBe(" outer /* nested */ still ");
  });

  it("unescapes doubled quotes in lifted strings", () => {
    expect(lex("SELECT 'it''s'").literals).toEqual([{ kind: "string", text: "it's" }]);
  });

  it("notices a second statement but not a trailing semicolon", () => {
    expect(lex("SELECT 1;").multiple).toBe(false);
    expect(lex("SELECT 1; ").multiple).toBe(false);
    expect(lex("SELECT 1; SELECT 2").multiple).toBe(true);
  });

  it("reports an unterminated string or comment as broken", () => {
    expect(lex("SELECT 'abc").broken).toBe(true);
    expect(lex("SELECT /* abc").broken).toBe(true);
    expect(lex("SELECT $x$ abc").broken).toBe(true);
  });

  it("rebuilds parseable SQL from a key, numbering lifted literals after the statement's parameters", () => {
    const lexed = lex("SELECT * FROM t WHERE a = $1 AND b = 'x' AND c IN (1, -2)");
    expect(shapeSql(lexed.shapeKey, lexed.maxParam + 1)).toBe(
      "SELECT * FROM t WHERE a = $1 AND b = $2 AND c IN ($3, $4)",
    );
  });
});
