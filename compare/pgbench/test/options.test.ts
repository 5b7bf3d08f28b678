import { describe, expect, it } from "vitest";
import { parseOptions, pgbenchRunArgs, workload } from "../src/index.js";

describe("command line", () => {
  it("defaults to three rounds of ten seconds over every target and workload", () => {
    const options = parseOptions([])!;
    expect(options.rounds).toBe(3);
    expect(options.durationSeconds).toBe(10);
    expect(options.targets).toEqual(["direct", "pgbouncer", "relay", "geoproxy"]);
    expect(options.workloads).toHaveLength(5);
    expect(options.pointReads).toBe(5000);
  });

  it("keeps the canonical target order whatever order the flag lists them in", () => {
    expect(parseOptions(["--targets", "relay,direct"])!.targets).toEqual(["direct", "relay"]);
  });

  it("ignores the -- that pnpm passes through", () => {
    expect(parseOptions(["--", "--duration", "2"])!.durationSeconds).toBe(2);
  });

  it("refuses an unknown target, a zero round count and an unknown flag", () => {
    expect(() => parseOptions(["--targets", "pgpool"])).toThrow(/unknown "pgpool"/);
    expect(() => parseOptions(["--rounds", "0"])).toThrow(/at least 1/);
    expect(() => parseOptions(["--bogus"])).toThrow();
  });

  it("returns nothing for --help", () => {
    expect(parseOptions(["--help"])).toBeUndefined();
  });
});

describe("pgbench arguments", () => {
  it("runs prepared select-only with no more threads than clients and without pgbench's own vacuum", () => {
    const args = pgbenchRunArgs(workload("select-prepared-1"), {
      durationSeconds: 7,
      threads: 2,
      logPrefix: "/t/x",
    });
    expect(args.join(" ")).toBe("-n -T 7 -c 1 -j 1 -M prepared -b select-only -l --log-prefix=/t/x");
  });

  it("runs TPC-B with the simple protocol on sixteen clients", () => {
    const args = pgbenchRunArgs(workload("tpcb-16"), { durationSeconds: 10, threads: 2, logPrefix: "/t/y" });
    expect(args).toContain("tpcb-like");
    expect(args.slice(args.indexOf("-c"), args.indexOf("-c") + 4)).toEqual(["-c", "16", "-j", "2"]);
    expect(args.slice(args.indexOf("-M"), args.indexOf("-M") + 2)).toEqual(["-M", "simple"]);
  });
});
