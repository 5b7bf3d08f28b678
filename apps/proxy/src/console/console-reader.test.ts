import { Analyzer } from "@geo/sql";
import { beforeAll, describe, expect, it } from "vitest";
import { findConsoleCommand, proxyConsoleReader } from "./console-reader.js";
import { CONSOLE_REGISTRY } from "./registry.js";

function read(text: string): { command: string; argument: string } | undefined {
  const found = findConsoleCommand(text);
  return found === undefined ? undefined : { command: found.entry.name, argument: found.argument };
}

describe("reading console commands", () => {
  it("reads every command of the registry by its words, in any case and spacing", () => {
    for (const { words, name } of CONSOLE_REGISTRY) {
      for (const text of [words, words.toLowerCase(), words.replaceAll(" ", "  \n "), `${words};`]) {
        expect(read(text), text).toEqual({ command: name, argument: "" });
      }
    }
  });

  it("names each command after its words", () => {
    expect(CONSOLE_REGISTRY.map((entry) => entry.name)).toEqual([
      "show-regions",
      "show-placement",
      "show-schema",
      "show-pools",
      "show-health",
      "show-alerts",
      "show-stats",
      "show-directory",
      "show-in-doubt",
      "show-clients",
      "show-peers",
      "where-is",
      "route",
      "relocate",
      "rebalance",
      "drain",
      "undrain",
      "restripe",
    ]);
  });

  it("allows leading comments and whitespace", () => {
    expect(read("/* ops */ SHOW HEALTH")).toEqual({ command: "show-health", argument: "" });
    expect(read("-- who\nSHOW CLIENTS")).toEqual({ command: "show-clients", argument: "" });
    expect(read("  \n\t/* a */ -- b\n /* c */show regions;")).toEqual({
      command: "show-regions",
      argument: "",
    });
    expect(read("/* geo: key=alice */ WHERE IS users alice")).toEqual({
      command: "where-is",
      argument: "users alice",
    });
  });

  it("counts a trailing semicolon, spaces and comments as no argument", () => {
    for (const text of [
      "SHOW REGIONS ;",
      "SHOW REGIONS;;",
      "SHOW REGIONS -- which ones?",
      "SHOW REGIONS; /* done */",
      "SHOW REGIONS/* done */",
      "SHOW REGIONS\n-- done\n",
    ]) {
      expect(read(text), text).toEqual({ command: "show-regions", argument: "" });
    }
  });

  it("hands the words after a command to it as its argument, without a trailing semicolon", () => {
    expect(read("WHERE IS users alice")).toEqual({ command: "where-is", argument: "users alice" });
    expect(read("where is orders bob;")).toEqual({ command: "where-is", argument: "orders bob" });
    expect(read("/* ops */ Show Directory 25 ;")).toEqual({ command: "show-directory", argument: "25" });
    expect(read("RELOCATE alice, bob TO 'us-east';")).toEqual({
      command: "relocate",
      argument: "alice, bob TO 'us-east'",
    });
    expect(read("REBALANCE eu-west TO eu-west-2 LIMIT 100")).toEqual({
      command: "rebalance",
      argument: "eu-west TO eu-west-2 LIMIT 100",
    });
    expect(read("ROUTE SELECT * FROM users WHERE tenant_id = 'alice'")).toEqual({
      command: "route",
      argument: "SELECT * FROM users WHERE tenant_id = 'alice'",
    });
    expect(read("DRAIN eu-replica.db.internal:5432")).toEqual({
      command: "drain",
      argument: "eu-replica.db.internal:5432",
    });
    expect(read("UNDRAIN eu-replica.db.internal:5432")).toEqual({
      command: "undrain",
      argument: "eu-replica.db.internal:5432",
    });
  });

  it("reads words a command does not take as its argument, for its handler to refuse", () => {
    expect(read("SHOW HEALTH now")).toEqual({ command: "show-health", argument: "now" });
    expect(read("show in  doubt for real;")).toEqual({ command: "show-in-doubt", argument: "for real" });
    expect(read("SHOW STATS everything")).toEqual({ command: "show-stats", argument: "everything" });
    expect(read("SHOW PEERS x")).toEqual({ command: "show-peers", argument: "x" });
  });

  it("leaves PostgreSQL's own statements alone, however close their words", () => {
    for (const text of [
      "SHOW search_path",
      "SHOW statement_timeout",
      "SHOW region",
      "show statsx",
      "SHOWSTATS",
      "SHOW regions.custom_setting",
      "SELECT 1",
      "SELECT 'SHOW REGIONS'",
      "WITH x AS (SELECT 1) SELECT * FROM x",
      "UPDATE users SET name = 'x' WHERE tenant_id = 'a'",
      "DELETE FROM users",
      "DROP TABLE users",
      "ROLLBACK",
      "ROUTES",
      "WHERE",
      "/* SHOW REGIONS */ SELECT 1",
      "-- SHOW REGIONS\nSELECT 1",
      "",
      "   ",
      "(SELECT 1)",
    ]) {
      expect(read(text), text).toBeUndefined();
    }
  });

  it("tells the analyzer which commands change the proxy's state", () => {
    const changing = CONSOLE_REGISTRY.filter((entry) => entry.changesProxyState).map((entry) => entry.words);
    expect(changing).toEqual(["RELOCATE", "REBALANCE", "DRAIN", "UNDRAIN", "RESTRIPE"]);
    expect(proxyConsoleReader.read("RELOCATE alice TO 'us-east'")).toEqual({
      command: "relocate",
      argument: "alice TO 'us-east'",
      changesProxyState: true,
    });
    expect(proxyConsoleReader.read("SHOW POOLS")).toEqual({
      command: "show-pools",
      argument: "",
      changesProxyState: false,
    });
  });

  it("says a batch may hold a command only when it mentions a command's words", () => {
    expect(proxyConsoleReader.mayHold("SELECT 1; SHOW REGIONS")).toBe(true);
    expect(proxyConsoleReader.mayHold("SELECT 1;/* x */where  is users a")).toBe(true);
    expect(proxyConsoleReader.mayHold("SELECT 1; SHOW search_path")).toBe(false);
    expect(proxyConsoleReader.mayHold("SELECT * FROM users WHERE tenant_id = 'a'; SELECT 2")).toBe(false);
  });
});

describe("the proxy's analyzer", () => {
  let analyzer: Analyzer;

  beforeAll(async () => {
    analyzer = await Analyzer.create({
      keyColumns: new Map([["users", "tenant_id"]]),
      console: proxyConsoleReader,
    });
  });

  it("analyses every console command as a read-only console statement with no tables", () => {
    for (const { words, name, changesProxyState } of CONSOLE_REGISTRY) {
      const analysis = analyzer.analyze(words);
      expect(analysis, words).toMatchObject({ kind: "console", readOnly: true, tables: [] });
      expect(analysis.console).toEqual({ command: name, argument: "", changesProxyState });
    }
  });

  it("sees a console SHOW with words as a console statement, alone and in a batch", () => {
    for (const text of [
      "SHOW HEALTH now",
      "SHOW ALERTS x",
      "SHOW IN DOUBT x",
      "SHOW REGIONS x",
      "SHOW STATS now",
    ]) {
      expect(analyzer.analyze(text).kind, text).toBe("console");
    }
    expect(analyzer.analyzeBatch("SELECT 1; SHOW REGIONS x").map((analysis) => analysis.kind)).toEqual([
      "select",
      "console",
    ]);
    expect(analyzer.analyze("SHOW search_path").kind).toBe("utility");
  });

  it("recognises every console command of a batch of console commands", () => {
    const batch = analyzer.analyzeBatch("SHOW REGIONS; SHOW POOLS; show clients;");
    expect(batch.map((a) => [a.kind, a.console?.command, a.text])).toEqual([
      ["console", "show-regions", "SHOW REGIONS"],
      ["console", "show-pools", "SHOW POOLS"],
      ["console", "show-clients", "show clients"],
    ]);
  });

  it("runs a console command and SQL of the same batch each in its place", () => {
    const batch = analyzer.analyzeBatch(
      "WHERE IS users alice; SELECT 1; SELECT name FROM users WHERE tenant_id = 'bob'; /* c */ ROUTE SELECT ';' FROM users",
    );
    expect(batch.map((a) => a.kind)).toEqual(["console", "select", "select", "console"]);
    expect(batch[0]?.console?.argument).toBe("users alice");
    expect(batch[3]?.console).toMatchObject({ command: "route", argument: "SELECT ';' FROM users" });
  });

  it("leaves a batch that only mentions console words to PostgreSQL's parser", () => {
    const batch = analyzer.analyzeBatch("SELECT 'SHOW REGIONS'; SELECT 'where is' AS route");
    expect(batch.map((a) => a.kind)).toEqual(["select", "select"]);
  });

  it("refuses a batch holding a command that changes the proxy's state, naming the fix", () => {
    expect(() => analyzer.analyzeBatch("SELECT 1; RELOCATE alice TO us-east")).toThrow(
      expect.objectContaining({
        sqlstate: "0A000",
        message: "RELOCATE cannot run inside a multi-statement query",
        hint: expect.stringContaining("send RELOCATE as a query of its own"),
      }),
    );
    for (const text of ["DRAIN a:5432; UNDRAIN a:5432", "SHOW REGIONS; REBALANCE a TO b LIMIT 1"]) {
      expect(() => analyzer.analyzeBatch(text), text).toThrow(expect.objectContaining({ sqlstate: "0A000" }));
    }
  });

  it("refuses a console command followed by more statements in one Parse", () => {
    expect(() => analyzer.analyze("WHERE IS users alice; SELECT 1")).toThrow(
      expect.objectContaining({ sqlstate: "42601", code: "multiple-commands" }),
    );
  });
});
