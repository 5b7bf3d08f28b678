import { beforeAll, describe, expect, it } from "vitest";
import { Analyzer } from "../src/index.js";
import { KEYS } from "./summarize.js";

let analyzer: Analyzer;

beforeAll(async () => {
  analyzer = await Analyzer.create({ keyColumns: KEYS });
});

describe("splitting INSERT ... VALUES by key", () => {
  it("rebuilds one INSERT per group of rows from the parse tree", () => {
    const a = analyzer.analyze(
      "INSERT INTO users (tenant_id, name) VALUES ('alice', 'a, b'), ('bob', 'it''s'), ('alice', 'c')",
    );
    expect(a.insert?.rowKeys.map((k) => k?.kind === "literal" && k.text)).toEqual(["alice", "bob", "alice"]);
    expect(a.insert?.split([0, 2])).toBe(
      "INSERT INTO users (tenant_id, name) VALUES ('alice', 'a, b'), ('alice', 'c')",
    );
    expect(a.insert?.split([1])).toBe("INSERT INTO users (tenant_id, name) VALUES ('bob', 'it''s')");
  });

  it("keeps ON CONFLICT, RETURNING and the rows in the order asked for", () => {
    const a = analyzer.analyze(
      "INSERT INTO users (tenant_id, name) VALUES ($1, 'x'), ($2, 'y'), ($3, 'z') ON CONFLICT (tenant_id) DO UPDATE SET name = excluded.name RETURNING id",
    );
    expect(a.insert?.split([2, 0])).toBe(
      "INSERT INTO users (tenant_id, name) VALUES ($3, 'z'), ($1, 'x') ON CONFLICT (tenant_id) DO UPDATE SET name = excluded.name RETURNING id",
    );
    expect(a.insert?.onConflict).toBe("update");
    expect(a.insert?.keyPosition).toBe(0);
  });

  it("splits a statement that was answered from the cache by its own text", () => {
    analyzer.analyze("INSERT INTO users (tenant_id, name) VALUES ('a', 'x'), ('b', 'y')");
    const b = analyzer.analyze("INSERT INTO users (tenant_id, name) VALUES ('c', 'x'), ('d', 'y')");
    expect(b.insert?.split([1])).toBe("INSERT INTO users (tenant_id, name) VALUES ('d', 'y')");
  });

  it("refuses a row number that is not in the statement", () => {
    const a = analyzer.analyze("INSERT INTO users (tenant_id) VALUES ('a')");
    expect(() => a.insert?.split([3])).toThrow(RangeError);
    expect(() => a.insert?.split([])).toThrow(RangeError);
  });
});
