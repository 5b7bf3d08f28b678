import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Every metric docs/metrics.md lists is read back from a running proxy's /metrics by at least one
 * end-to-end test, so a metric that stops moving (or was never wired) cannot go unnoticed.
 */

const DOC = fileURLToPath(new URL("../../../docs/metrics.md", import.meta.url));
const TESTS = fileURLToPath(new URL(".", import.meta.url));

function documentedMetrics(): string[] {
  const names: string[] = [];
  for (const line of readFileSync(DOC, "utf8").split("\n")) {
    const match = /^\| `(geoproxy_[a-z0-9_]+)`/.exec(line);
    if (match !== null) names.push(match[1]!);
  }
  return names;
}

/** The end-to-end test files that name `metric` as a string (a histogram by any of its series). */
function testsNaming(metric: string, files: ReadonlyMap<string, string>): string[] {
  const quoted = new RegExp(`"${metric}(?:_bucket|_sum|_count)?"`);
  return [...files].filter(([, text]) => quoted.test(text)).map(([name]) => name);
}

describe("docs/metrics.md against the end-to-end tests", () => {
  const files = new Map(
    readdirSync(TESTS)
      .filter((name) => name.endsWith(".e2e.test.ts"))
      .map((name) => [name, readFileSync(`${TESTS}${name}`, "utf8")] as const),
  );

  it("lists the metrics in its tables", () => {
    const names = documentedMetrics();
    expect(names.length).toBeGreaterThanOrEqual(19);
    expect(names).toContain("geoproxy_backend_lag_bytes");
    expect(new Set(names).size).toBe(names.length);
  });

  it("has every documented metric read from /metrics by an end-to-end test", () => {
    const unread = documentedMetrics().filter((metric) => testsNaming(metric, files).length === 0);
    expect(unread).toEqual([]);
  });
});
