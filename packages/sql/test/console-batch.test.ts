import { beforeAll, describe, expect, it } from "vitest";
import { Analyzer } from "../src/index.js";

let analyzer: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create({ keyColumns: new Map([["users", "tenant_id"]]) });
});

describe("console commands in a multi-statement query", () => {
  it("recognises every console command of a batch of console commands", () => {
    const batch = analyzer.analyzeBatch("SHOW REGIONS; SHOW POOLS;");
    expect(batch.map((a) => [a.kind, a.console?.command, a.text])).toEqual([
      ["console", "show-regions", "SHOW REGIONS"],
      ["console", "show-pools", "SHOW POOLS"],
    ]);
  });

  it("runs a console command and SQL of the same batch each in its place", () => {
    const batch = analyzer.analyzeBatch(
      "WHERE IS users alice; SELECT 1; SELECT name FROM users WHERE tenant_id = 'bob'; /* c */ ROUTE SELECT ';' FROM users",
    );
    expect(batch.map((a) => a.kind)).toEqual(["console", "select", "select", "console"]);
    expect(batch[0]?.console).toEqual({ command: "where-is", argument: "users alice" });
    expect(batch[2]?.text).toBe("SELECT name FROM users WHERE tenant_id = 'bob'");
    expect(batch[3]?.console).toEqual({ command: "route", argument: "SELECT ';' FROM users" });
  });

  it("carries a batch's leading hint to its SQL statements, not to its console commands", () => {
    const batch = analyzer.analyzeBatch("/* geo: key=bob */ SELECT 1; SHOW PLACEMENT; SELECT 2");
    expect(batch.map((a) => a.kind)).toEqual(["select", "console", "select"]);
    expect(batch.map((a) => a.hints.key)).toEqual(["bob", undefined, "bob"]);
  });

  it("leaves a batch that only mentions console words to PostgreSQL's parser", () => {
    const batch = analyzer.analyzeBatch("SELECT 'SHOW REGIONS'; SELECT 'where is' AS route");
    expect(batch.map((a) => a.kind)).toEqual(["select", "select"]);
  });

  it("refuses a batch holding a console command that changes the proxy's state, naming the fix", () => {
    expect(() => analyzer.analyzeBatch("SELECT 1; RELOCATE alice TO us-east")).toThrow(
      expect.objectContaining({
        sqlstate: "0A000",
        message: "RELOCATE cannot run inside a multi-statement query",
        hint: expect.stringContaining("send RELOCATE as a query of its own"),
      }),
    );
    expect(() => analyzer.analyzeBatch("DRAIN us-east; UNDRAIN us-east")).toThrow(
      expect.objectContaining({ sqlstate: "0A000" }),
    );
  });

  it("still reports PostgreSQL's syntax error for the SQL part of a batch with a console command", () => {
    expect(() => analyzer.analyzeBatch("SHOW REGIONS; SELEC 1")).toThrow(
      expect.objectContaining({ sqlstate: "42601" }),
    );
  });

  it("finds console commands an embedding adds by wrapping analyze, and leaves other SHOWs to PostgreSQL", async () => {
    const wrapped = await Analyzer.create({ keyColumns: new Map([["users", "tenant_id"]]) });
    const analyze = wrapped.analyze.bind(wrapped);
    const template = analyze("SHOW REGIONS");
    wrapped.analyze = (text) =>
      /^show widgets$/i.test(text.trim())
        ? Object.create(template, { text: { value: text } })
        : analyze(text);
    const batch = wrapped.analyzeBatch("SHOW WIDGETS; SHOW search_path; SHOW REGIONS");
    expect(batch.map((a) => [a.kind, a.text])).toEqual([
      ["console", "SHOW WIDGETS"],
      ["utility", "SHOW search_path"],
      ["console", "SHOW REGIONS"],
    ]);
  });

  it("refuses a console command followed by more statements in one Parse", () => {
    expect(() => analyzer.analyze("WHERE IS users alice; SELECT 1")).toThrow(
      expect.objectContaining({ sqlstate: "42601", code: "multiple-commands" }),
    );
    expect(analyzer.analyze("WHERE IS users alice;").console).toEqual({
      command: "where-is",
      argument: "users alice",
    });
  });
});
