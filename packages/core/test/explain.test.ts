import { Analyzer } from "@geo/sql";
import { beforeAll, describe, expect, it } from "vitest";
import { type ExplainOptions, explain, schemaInfoFor } from "../src/index.js";
import { exampleDirectory, exampleTopology } from "./support/examples.js";

const topology = exampleTopology;
const directory = exampleDirectory;
let options: ExplainOptions;

beforeAll(async () => {
  options = { analyzer: await Analyzer.create(schemaInfoFor(topology)), topology, directory };
});

function lines(text: string): string[] {
  return text.split("\n");
}

describe("explain, on the documented examples", () => {
  it("a point read goes to its key's region", () => {
    expect(explain("SELECT * FROM users WHERE tenant_id = 'alice'", options)).toBe(
      ["  kind    Select, ReadOnly, tables: users", "  plan    one region: eu-west (ReadOnly)"].join("\n"),
    );
  });

  it("a read over two keys with an order and a limit is merged in order", () => {
    const out = lines(
      explain(
        "SELECT * FROM users WHERE tenant_id IN ('alice','bob') ORDER BY created_at DESC LIMIT 20",
        options,
      ),
    );
    expect(out[0]).toBe("  kind    Select, ReadOnly, tables: users");
    expect(out[1]).toBe("  plan    scatter-gather over eu-west, us-east");
    expect(out[2]).toMatch(/^ {2}regions SELECT .*ORDER BY created_at DESC LIMIT 20$/);
    expect(out[3]).toBe("  finish  rows: merged in order, limit 20");
  });

  it("an aggregate over every region is regrouped in the home region", () => {
    const out = lines(
      explain(
        "SELECT country, count(*), avg(age) FROM users GROUP BY country HAVING count(*) > 100",
        options,
      ),
    );
    expect(out[1]).toBe("  plan    scatter-gather over ap-south, eu-west, us-east");
    expect(out[2]).toMatch(
      /^ {2}regions SELECT country.*count\(\*\).*sum\(age\).*count\(age\).* FROM users GROUP BY country$/,
    );
    expect(out[3]).toMatch(/^ {2}finish {2}\d partial aggregate\(s\) regrouped in the home region$/);
  });

  it("a write spanning regions is a distributed write with each region's rows", () => {
    const out = lines(
      explain("INSERT INTO users (tenant_id, name) VALUES ('alice','a'), ('bob','b')", options),
    );
    expect(out[0]).toBe("  kind    Insert, ReadWrite, tables: users");
    expect(out[1]).toBe("  plan    distributed write over eu-west, us-east (two-phase commit)");
    expect(out[2]).toMatch(/^ {2}regions eu-west: INSERT INTO users .*'alice'/);
    expect(out[2]).not.toMatch(/'bob'/);
    expect(out[3]).toMatch(/^ {2}regions us-east: INSERT INTO users .*'bob'/);
  });

  it("keys joined across two regions give an exact plan or a refusal naming the regions", () => {
    const out = explain(
      "SELECT * FROM users u JOIN orders o ON o.tenant_id = u.tenant_id WHERE u.tenant_id = 'alice' AND o.tenant_id = 'bob'",
      options,
    );
    expect(lines(out)[0]).toBe("  kind    Select, ReadOnly, tables: users, orders");
    expect([
      "  plan    one region: eu-west (ReadOnly)",
      "  plan    scatter-gather over eu-west, us-east",
      "  plan    refused [0A000]",
    ]).toContain(lines(out)[1]);
  });

  it("a join on a non-key column is gathered or refused with the reason and the fix", () => {
    const out = lines(explain("SELECT * FROM users u JOIN orders o ON o.buyer = u.id", options));
    if (out[1] === "  plan    refused [0A000]") {
      expect(out[2]).toBe(
        "  reason  the statement joins users, orders across regions ap-south, eu-west, us-east",
      );
      expect(out[3]).toBe(
        "  hint    constrain every table to the same shard key, or make the smaller table global_replicated",
      );
    } else {
      expect(out[1]).toBe("  plan    scatter-gather over ap-south, eu-west, us-east");
      expect(out.at(-1)).toMatch(/^ {2}finish {2}rows gathered to the home region/);
    }
  });

  it("a prepared statement is deferred until its parameter is bound, then routed", () => {
    expect(lines(explain("SELECT * FROM users WHERE tenant_id = $1", options))[1]).toBe(
      "  plan    deferred until $1 is bound",
    );
    expect(
      lines(explain("SELECT * FROM users WHERE tenant_id = $1", { ...options, params: ["bob"] }))[1],
    ).toBe("  plan    one region: us-east (ReadOnly)");
  });

  it("prints a refusal's SQLSTATE, reason and hint", () => {
    expect(explain("SELECT * FROM invoices", options)).toBe(
      [
        "  kind    Select, ReadOnly, tables: invoices",
        "  plan    refused [0A000]",
        "  reason  table invoices has no placement policy",
        '  hint    add a [[tables]] entry for invoices with placement = "geo_partitioned", "global_replicated" or "pinned", or set [routing] default_placement',
      ].join("\n"),
    );
  });

  it("prints PostgreSQL's syntax error as a refusal", () => {
    expect(lines(explain("SELEC 1", options))[0]).toBe("  plan    refused [42601]");
  });
});
