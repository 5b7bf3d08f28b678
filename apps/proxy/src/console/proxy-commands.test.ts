import { describe, expect, it } from "vitest";
import { exampleContext } from "./example-context.js";
import { readProxyConsoleCommand, withProxyConsoleCommands } from "./proxy-commands.js";

describe("readProxyConsoleCommand", () => {
  it("reads SHOW STATS, SHOW CLIENTS and SHOW DIRECTORY with a limit, in any case, after comments", () => {
    expect(readProxyConsoleCommand("SHOW STATS")).toEqual({ command: "show-stats", argument: "" });
    expect(readProxyConsoleCommand("show clients;")).toEqual({ command: "show-clients", argument: "" });
    expect(readProxyConsoleCommand("/* ops */ Show Directory 25 ;")).toEqual({
      command: "show-directory",
      argument: "25",
    });
    expect(readProxyConsoleCommand("-- who\nSHOW CLIENTS")).toEqual({
      command: "show-clients",
      argument: "",
    });
  });

  it("leaves PostgreSQL's own SHOW and every other statement alone", () => {
    for (const text of [
      "SHOW search_path",
      "SHOW statement_timeout",
      "SELECT 1",
      "show statsx",
      "SHOWSTATS",
    ]) {
      expect(readProxyConsoleCommand(text), text).toBeUndefined();
    }
  });
});

describe("withProxyConsoleCommands", () => {
  it("makes the analyzer see the proxy's commands as console statements and others as before", async () => {
    const { analyzer } = await exampleContext();
    const wrapped = withProxyConsoleCommands(analyzer);
    const stats = wrapped.analyze("SHOW STATS");
    expect(stats.kind).toBe("console");
    expect(stats.text).toBe("SHOW STATS");
    expect(stats.tables).toEqual([]);
    expect(wrapped.analyzeBatch("show clients;").map((analysis) => analysis.kind)).toEqual(["console"]);
    expect(wrapped.analyze("SHOW search_path").kind).not.toBe("console");
    expect(wrapped.analyze("SELECT * FROM users WHERE tenant_id = 'bob'").tables[0]?.name).toBe("users");
  });
});
