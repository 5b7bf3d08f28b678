import { explain } from "@geo/core";
import { PgError } from "@geo/proto";
import { describe, expect, it } from "vitest";
import type { ConsoleRows } from "./console-command.js";
import { exampleContext } from "./example-context.js";
import { runConsoleCommand } from "./index.js";

function fields(result: unknown): Record<string, string> {
  expect(result).not.toBeInstanceOf(PgError);
  const rows = result as ConsoleRows;
  expect(rows.columns).toEqual(["field", "value"]);
  return Object.fromEntries(rows.rows.map(([field, value]) => [field!, value!]));
}

describe("ROUTE", () => {
  it("says a keyed read runs in its key's region, without running it", async () => {
    const result = runConsoleCommand(
      "ROUTE SELECT * FROM users WHERE tenant_id = 'bob'",
      await exampleContext(),
    );
    expect(result).toEqual({
      columns: ["field", "value"],
      rows: [
        ["kind", "Select, ReadOnly, tables: users"],
        ["plan", "one region: us-east (ReadOnly)"],
      ],
      tag: "SELECT 2",
    });
  });

  it("gives @geo/core's explain lines, field by field, for a scatter-gather read", async () => {
    const ctx = await exampleContext();
    const statement =
      "SELECT * FROM users WHERE tenant_id IN ('alice','bob') ORDER BY created_at DESC LIMIT 20";
    const result = runConsoleCommand(`ROUTE ${statement}`, ctx);
    const expected = explain(statement, {
      analyzer: ctx.analyzer,
      topology: ctx.topology,
      directory: ctx.directory,
    })
      .split("\n")
      .map((line) => [line.slice(2, 10).trim(), line.slice(10)]);
    expect((result as ConsoleRows).rows).toEqual(expected);
    const rows = fields(result);
    expect(rows["plan"]).toBe("scatter-gather over eu-west, us-east");
    expect(rows["finish"]).toBe("rows: merged in order, limit 20");
  });

  it("shows a write across regions as a distributed write", async () => {
    const rows = fields(
      runConsoleCommand(
        "ROUTE INSERT INTO users (tenant_id, id, name) VALUES ('alice', 9, 'a'), ('bob', 9, 'b');",
        await exampleContext(),
      ),
    );
    expect(rows["kind"]).toBe("Insert, ReadWrite, tables: users");
    expect(rows["plan"]).toBe("distributed write over eu-west, us-east (two-phase commit)");
  });

  it("shows a refusal with its SQLSTATE, reason and hint", async () => {
    const rows = fields(
      runConsoleCommand(
        "ROUTE UPDATE users SET tenant_id = 'x' WHERE tenant_id = 'alice'",
        await exampleContext(),
      ),
    );
    expect(rows["plan"]).toBe("refused [0A000]");
    expect(rows["reason"]).toContain("users.tenant_id");
    expect(rows["hint"]).toContain("RELOCATE");
  });

  it("follows a geo: hint in the routed statement", async () => {
    const rows = fields(
      runConsoleCommand(
        "ROUTE /* geo: key=chandra */ SELECT * FROM users WHERE lower(tenant_id) = 'x'",
        await exampleContext(),
      ),
    );
    expect(rows["plan"]).toBe("one region: ap-south (ReadOnly)");
  });

  it("says a statement with an unbound parameter is deferred", async () => {
    const rows = fields(
      runConsoleCommand("ROUTE SELECT * FROM users WHERE tenant_id = $1", await exampleContext()),
    );
    expect(rows["plan"]).toBe("deferred until $1 is bound");
  });

  it("reports a statement PostgreSQL's parser rejects as refused with 42601", async () => {
    const rows = fields(runConsoleCommand("ROUTE SELEKT 1", await exampleContext()));
    expect(rows["plan"]).toBe("refused [42601]");
    expect(rows["reason"]).toBeDefined();
  });

  it("refuses ROUTE without a statement with 42601 and an example", async () => {
    const result = runConsoleCommand("ROUTE", await exampleContext());
    expect(result).toBeInstanceOf(PgError);
    expect((result as PgError).code).toBe("42601");
    expect((result as PgError).hint).toContain("ROUTE SELECT");
  });
});
