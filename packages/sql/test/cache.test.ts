import { beforeAll, describe, expect, it } from "vitest";
import { Analyzer } from "../src/index.js";
import { formatKey, KEYS, summarize } from "./summarize.js";

let fresh: () => Analyzer;

beforeAll(async () => {
  await Analyzer.create({ keyColumns: KEYS });
  fresh = () => new Analyzer({ keyColumns: KEYS });
});

describe("the analysis cache", () => {
  it("shares one entry between statements that differ only in literals", () => {
    const analyzer = fresh();
    const alice = analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'alice'");
    const bob = analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'bob'");
    expect(formatKey(alice.tables[0]!.key)).toBe("'alice'");
    expect(formatKey(bob.tables[0]!.key)).toBe("'bob'");
    expect(bob.text).toBe("SELECT * FROM users WHERE tenant_id = 'bob'");
    expect(analyzer.stats()).toMatchObject({ hits: 1, misses: 1, size: 1, uncacheable: 0 });
  });

  it("never routes id = -1 as id = 1", () => {
    const analyzer = fresh();
    expect(formatKey(analyzer.analyze("SELECT * FROM accounts WHERE id = 1").tables[0]!.key)).toBe("1");
    expect(formatKey(analyzer.analyze("SELECT * FROM accounts WHERE id = -1").tables[0]!.key)).toBe("-1");
    expect(formatKey(analyzer.analyze("SELECT * FROM accounts WHERE id=-1").tables[0]!.key)).toBe("-1");
    expect(formatKey(analyzer.analyze("SELECT * FROM accounts WHERE id = - 1").tables[0]!.key)).toBe("-1");
  });

  it("leaves hints out of the key but reads each statement's own hint", () => {
    const analyzer = fresh();
    const a = analyzer.analyze("/* geo: key=a */ SELECT * FROM users WHERE lower(tenant_id) = $1");
    const b = analyzer.analyze("/* geo: key=b */ SELECT * FROM users WHERE lower(tenant_id) = $1");
    expect([a.hints.key, b.hints.key]).toEqual(["a", "b"]);
    expect(analyzer.stats()).toMatchObject({ hits: 1, misses: 1, size: 1 });
  });

  it("does not cache a shape whose normalised analysis disagrees with the original", () => {
    const analyzer = fresh();
    const sql = "SELECT * FROM users WHERE tenant_id = 'a' AND tenant_id = 'b'";
    expect(formatKey(analyzer.analyze(sql).tables[0]!.key)).toBe("none");
    expect(analyzer.stats().uncacheable).toBe(1);
    expect(
      formatKey(
        analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'a' AND tenant_id = 'a'").tables[0]!.key,
      ),
    ).toBe("'a'");
    expect(formatKey(analyzer.analyze(sql).tables[0]!.key)).toBe("none");
  });

  it("analyses a statement whose normalised form does not parse, every time, correctly", () => {
    const analyzer = fresh();
    const first = analyzer.analyze("SET statement_timeout = 5000");
    const second = analyzer.analyze("SET statement_timeout = 9000");
    expect(first.sessionEffects[0]?.value).toBe("5000");
    expect(second.sessionEffects[0]?.value).toBe("9000");
    expect(analyzer.stats().uncacheable).toBe(1);
  });

  it("gives the same analysis from a hit as from a cold analysis", () => {
    const analyzer = fresh();
    const cold = fresh();
    const statements = [
      "INSERT INTO users (tenant_id, name) VALUES ('a', 'x'), ('b', 'y')",
      "INSERT INTO users (tenant_id, name) VALUES ('c', 'x'), ('c', 'y')",
      "SELECT * FROM users WHERE tenant_id = ANY('{a,b}')",
      "SELECT * FROM users WHERE tenant_id = ANY('{c}')",
      "SELECT * FROM users u WHERE u.tenant_id = 'alice' AND EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = u.tenant_id)",
      "SELECT * FROM users u WHERE u.tenant_id = 'bob' AND EXISTS (SELECT 1 FROM orders o WHERE o.tenant_id = u.tenant_id)",
    ];
    for (const sql of statements)
      expect(summarize(analyzer.analyze(sql))).toEqual(summarize(cold.analyzeCold(sql)));
    expect(analyzer.stats().hits).toBe(3);
  });

  it("keeps no more entries than its capacity", () => {
    const analyzer = new Analyzer({ keyColumns: KEYS, cacheSize: 2 });
    analyzer.analyze("SELECT 1 FROM users");
    analyzer.analyze("SELECT 2 FROM orders");
    analyzer.analyze("SELECT * FROM payments");
    expect(analyzer.stats()).toMatchObject({ size: 2, capacity: 2 });
  });

  it("works without a cache", () => {
    const analyzer = new Analyzer({ keyColumns: KEYS, cacheSize: 0 });
    analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'a'");
    const b = analyzer.analyze("SELECT * FROM users WHERE tenant_id = 'b'");
    expect(formatKey(b.tables[0]!.key)).toBe("'b'");
    expect(analyzer.stats()).toMatchObject({ hits: 0, size: 0 });
  });

  it("splits a batch into its statements and carries a leading hint to each", () => {
    const analyzer = fresh();
    const batch = analyzer.analyzeBatch(
      "/* geo: key=a */ BEGIN; UPDATE users SET n = 1 WHERE tenant_id = 'a'; COMMIT;",
    );
    expect(batch.map((a) => a.kind)).toEqual(["transaction", "update", "transaction"]);
    expect(batch.map((a) => a.hints.key)).toEqual(["a", "a", "a"]);
    expect(batch[1]?.text).toBe("UPDATE users SET n = 1 WHERE tenant_id = 'a'");
    expect(analyzer.analyzeBatch("")).toEqual([]);
  });

  it("reports a syntax error's position in characters of the original text", () => {
    const analyzer = fresh();
    expect(() => analyzer.analyze("SELECT 'é', 'ü' FRM users")).toThrow(
      expect.objectContaining({ sqlstate: "42601", position: 21 }),
    );
  });
});
