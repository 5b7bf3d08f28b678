import { beforeAll, describe, expect, it } from "vitest";
import { Analyzer, type ConsoleReader } from "../src/index.js";
import { widgetConsole } from "./widget-console.js";

const keyColumns = new Map([["users", "tenant_id"]]);
let analyzer: Analyzer;
let plain: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create({ keyColumns, console: widgetConsole });
  plain = await Analyzer.create({ keyColumns });
});

describe("the console reader hook", () => {
  it("analyses what the reader recognises as a read-only console statement with no tables", () => {
    for (const a of [analyzer.analyze("SHOW WIDGETS"), analyzer.analyzeCold("SHOW WIDGETS")]) {
      expect(a).toMatchObject({ kind: "console", command: "CONSOLE", readOnly: true, tables: [] });
      expect(a.console).toEqual({ command: "show-widgets", argument: "", changesProxyState: false });
    }
    expect(analyzer.analyze("COUNT WIDGETS blue;").console).toEqual({
      command: "count-widgets",
      argument: "blue",
      changesProxyState: false,
    });
  });

  it("leaves what the reader does not recognise to PostgreSQL's parser", () => {
    expect(analyzer.analyze("SHOW search_path")).toMatchObject({ kind: "utility", command: "SHOW" });
    expect(analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'bob'").tables[0]?.name).toBe("users");
  });

  it("knows no console command without a reader: SHOW REGIONS is an ordinary SHOW", () => {
    for (const text of ["SHOW REGIONS", "SHOW WIDGETS"]) {
      const a = plain.analyze(text);
      expect(a).toMatchObject({ kind: "utility", command: "SHOW" });
      expect(a.console).toBeUndefined();
    }
    expect(plain.analyzeBatch("SHOW REGIONS; SELECT 1").map((a) => a.kind)).toEqual(["utility", "select"]);
    expect(() => plain.analyze("WHERE IS users alice")).toThrow(
      expect.objectContaining({ sqlstate: "42601" }),
    );
  });

  it("asks the reader about each statement once its text is cached, not again", () => {
    let reads = 0;
    const counting: ConsoleReader = {
      read: (text) => {
        reads++;
        return widgetConsole.read(text);
      },
      mayHold: widgetConsole.mayHold,
    };
    const cached = new Analyzer({ keyColumns, console: counting });
    for (let i = 0; i < 5; i++) cached.analyze("SHOW WIDGETS");
    expect(reads).toBe(2);
  });
});

describe("console commands in a multi-statement query", () => {
  it("recognises every console command of a batch of console commands", () => {
    const batch = analyzer.analyzeBatch("SHOW WIDGETS; COUNT WIDGETS;");
    expect(batch.map((a) => [a.kind, a.console?.command, a.text])).toEqual([
      ["console", "show-widgets", "SHOW WIDGETS"],
      ["console", "count-widgets", "COUNT WIDGETS"],
    ]);
  });

  it("runs a console command and SQL of the same batch each in its place", () => {
    const batch = analyzer.analyzeBatch(
      "COUNT WIDGETS red; SELECT 1; SELECT name FROM users WHERE tenant_id = 'bob'; /* c */ COUNT WIDGETS ';'",
    );
    expect(batch.map((a) => a.kind)).toEqual(["console", "select", "select", "console"]);
    expect(batch[0]?.console).toEqual({
      command: "count-widgets",
      argument: "red",
      changesProxyState: false,
    });
    expect(batch[2]?.text).toBe("SELECT name FROM users WHERE tenant_id = 'bob'");
    expect(batch[3]?.console?.argument).toBe("';'");
  });

  it("carries a batch's leading hint to its SQL statements, not to its console commands", () => {
    const batch = analyzer.analyzeBatch("/* geo: key=bob */ SELECT 1; SHOW WIDGETS; SELECT 2");
    expect(batch.map((a) => a.kind)).toEqual(["select", "console", "select"]);
    expect(batch.map((a) => a.hints.key)).toEqual(["bob", undefined, "bob"]);
  });

  it("leaves a batch that only mentions console words to PostgreSQL's parser", () => {
    const batch = analyzer.analyzeBatch("SELECT 'SHOW WIDGETS'; SELECT 'widgets' AS show");
    expect(batch.map((a) => a.kind)).toEqual(["select", "select"]);
  });

  it("does not cut a batch the reader says holds no console command", () => {
    let reads = 0;
    const never: ConsoleReader = {
      read: (text) => {
        reads++;
        return widgetConsole.read(text);
      },
      mayHold: () => false,
    };
    const batch = new Analyzer({ keyColumns, console: never }).analyzeBatch("SELECT 1; SHOW WIDGETS");
    expect(batch.map((a) => a.kind)).toEqual(["select", "utility"]);
    expect(reads).toBe(0);
  });

  it("refuses a batch holding a console command that changes the embedding's state, naming the fix", () => {
    expect(() => analyzer.analyzeBatch("SELECT 1; FREEZE WIDGETS now")).toThrow(
      expect.objectContaining({
        sqlstate: "0A000",
        code: "console-in-batch",
        message: "FREEZE WIDGETS cannot run inside a multi-statement query",
        hint: expect.stringContaining("send FREEZE WIDGETS as a query of its own"),
      }),
    );
    expect(() => analyzer.analyzeBatch("SHOW WIDGETS; FREEZE WIDGETS")).toThrow(
      expect.objectContaining({ sqlstate: "0A000" }),
    );
    expect(analyzer.analyzeBatch("FREEZE WIDGETS now").map((a) => a.console?.changesProxyState)).toEqual([
      true,
    ]);
  });

  it("still reports PostgreSQL's syntax error for the SQL part of a batch with a console command", () => {
    expect(() => analyzer.analyzeBatch("SHOW WIDGETS; SELEC 1")).toThrow(
      expect.objectContaining({ sqlstate: "42601" }),
    );
  });

  it("refuses a console command followed by more statements in one Parse", () => {
    expect(() => analyzer.analyze("COUNT WIDGETS red; SELECT 1")).toThrow(
      expect.objectContaining({ sqlstate: "42601", code: "multiple-commands" }),
    );
    expect(analyzer.analyze("COUNT WIDGETS red;").console?.argument).toBe("red");
  });
});
