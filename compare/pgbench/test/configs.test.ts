import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@geo/core";
import { describe, expect, it } from "vitest";
import { findPgbouncer, geoproxyConfigToml, PgbouncerMissingError, pgbouncerIni } from "../src/index.js";

const backend = { host: "127.0.0.1", port: 54321, user: "postgres", database: "postgres" };

describe("the configurations the kit writes", () => {
  it("gives geoproxy one home region whose primary is the benchmarked server, accepted by @geo/core", () => {
    const config = parseConfig(geoproxyConfigToml(backend, 7000, 20), "geoproxy.toml");
    expect(config.server.port).toBe(7000);
    expect(config.regions).toHaveLength(1);
    expect(config.regions[0]?.home).toBe(true);
    expect(config.regions[0]?.primary).toMatchObject({
      host: "127.0.0.1",
      port: 54321,
      database: "postgres",
    });
    expect(config.pool.max).toBe(20);
    expect(config.tables.map((table) => table.table)).toContain("pgbench_accounts");
  });

  it("runs PgBouncer with transaction pooling and the requested pool size on loopback", () => {
    const ini = pgbouncerIni(backend, 7001, "/tmp/x", { poolSize: 20, maxClients: 200 });
    expect(ini).toMatch(/^pool_mode = transaction$/m);
    expect(ini).toMatch(/^default_pool_size = 20$/m);
    expect(ini).toMatch(/^listen_addr = 127\.0\.0\.1$/m);
    expect(ini).toMatch(/^postgres = host=127\.0\.0\.1 port=54321 dbname=postgres$/m);
  });
});

describe("finding PgBouncer", () => {
  it("says how to install it when it is nowhere to be found", () => {
    expect(() => findPgbouncer([], "/nonexistent-bin")).toThrow(PgbouncerMissingError);
    expect(() => findPgbouncer([], "/nonexistent-bin")).toThrow(/apt-get install -y pgbouncer/);
  });

  it("looks along the search path when it is not in the usual places", () => {
    const dir = mkdtempSync(join(tmpdir(), "geo-compare-pgbouncer-path-"));
    try {
      writeFileSync(join(dir, "pgbouncer"), "");
      expect(findPgbouncer(["/nonexistent/pgbouncer"], `/nonexistent-bin:${dir}`)).toBe(
        join(dir, "pgbouncer"),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
