import { describe, expect, it } from "vitest";
import {
  ConfigError,
  checkWorkers,
  DEFAULTS,
  loadConfig,
  MAX_WORKERS,
  parseConfig,
  regionTimeouts,
  resolveWorkers,
} from "../src/index.js";
import { examples } from "./support/examples.js";

const REGIONS = `
[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "eu.db" }

[[topology.regions]]
id = "us-east"
primary = { host = "us.db", port = 6543 }
`;

function configError(text: string): ConfigError {
  try {
    parseConfig(text, "test.toml");
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("configuration", () => {
  it("loads the example configuration with every default filled in", () => {
    const config = loadConfig(`${examples}geoproxy.toml`);
    expect(config.regions.map((region) => region.id)).toEqual(["eu-west", "us-east", "ap-south"]);
    expect(config.regions.map((region) => region.primary.port)).toEqual([5433, 5434, 5435]);
    expect(config.regions.find((region) => region.home)?.id).toBe("eu-west");
    expect(config.server).toMatchObject({ host: "127.0.0.1", port: 6432, trustBeyondLoopback: false });
    expect(config.pool.connectTimeoutMs).toBe(DEFAULTS.pool.connectTimeoutMs);
    expect(config.tables.find((table) => table.table === "fx_rates")).toEqual({
      table: "fx_rates",
      placement: "global_replicated",
      writer: "us-east",
      residency: "none",
    });
    expect(config.admin).toEqual({ host: "127.0.0.1", port: 9930, tls: false });
    expect(config.directoryStore).toBeUndefined();
    expect(config.directory).toEqual({ file: `${examples}keys.tsv` });
  });

  it("resolves the directory file against the configuration's folder, keeps an absolute one, and has none by default", () => {
    expect(
      parseConfig(`${REGIONS}\n[directory]\nfile = "keys.tsv"\n`, "/etc/geo/geoproxy.toml").directory,
    ).toEqual({
      file: "/etc/geo/keys.tsv",
    });
    expect(
      parseConfig(`${REGIONS}\n[directory]\nfile = "../data/k.tsv"\n`, "/etc/geo/geoproxy.toml").directory,
    ).toEqual({
      file: "/etc/data/k.tsv",
    });
    expect(
      parseConfig(`${REGIONS}\n[directory]\nfile = "/srv/keys.tsv"\n`, "/etc/geo/geoproxy.toml").directory,
    ).toEqual({
      file: "/srv/keys.tsv",
    });
    expect(parseConfig(REGIONS, "/etc/geo/geoproxy.toml").directory).toEqual({});
    expect(configError(`${REGIONS}\n[directory]\npath = "keys.tsv"\n`).message).toMatch(
      /directory\.path: unknown field.*file/,
    );
    expect(configError(`${REGIONS}\n[directory]\nfile = ""\n`).message).toMatch(
      /directory\.file: must not be empty/,
    );
  });

  it("accepts a file holding only the topology and the tables", () => {
    const config = loadConfig(`${examples}topology.toml`);
    expect(config.tables).toHaveLength(5);
    expect(config.server.port).toBe(6432);
    expect(config.gather).toEqual(DEFAULTS.gather);
    expect(config.regions[0]!.location).toBe("eu-west");
    expect(config.regions[0]!.primary.database).toBe("shop");
  });

  it("gives a region's port and location their defaults and keeps its replicas", () => {
    const config = parseConfig(`
[[topology.regions]]
id = "eu-west-2"
location = "eu-west"
home = true
primary = { host = "eu2.db" }
replicas = [{ host = "eu2-r1.db" }, { host = "eu2-r2.db", port = 5440 }]
`);
    const region = config.regions[0]!;
    expect(region.location).toBe("eu-west");
    // No database named: each client gets its own; the proxy's connections open "postgres".
    expect(region.primary).toEqual({
      host: "eu2.db",
      port: 5432,
      database: "postgres",
      fixedDatabase: false,
    });
    expect(region.replicas.map((replica) => `${replica.host}:${replica.port}`)).toEqual([
      "eu2-r1.db:5432",
      "eu2-r2.db:5440",
    ]);
  });

  it("fixes the database of every client's connections when the endpoint names one", () => {
    const config = parseConfig(`
[[topology.regions]]
id = "eu"
home = true
primary = { host = "eu.db", database = "shop" }
`);
    expect(config.regions[0]!.primary).toMatchObject({ database: "shop", fixedDatabase: true });
  });

  it("refuses an unknown field, naming the file, the line, the path and the known fields", () => {
    const error = configError(`${REGIONS}
[[tables]]
table = "users"
placement = "geo_partitioned"
key = "tenant_id"
residncy = "strict"
`);
    expect(error.code).toBe("unknown_field");
    expect(error.file).toBe("test.toml");
    expect(error.line).toBe(15);
    expect(error.path).toBe("tables[0].residncy");
    expect(error.choices).toContain("residency");
    expect(error.message).toMatch(/^test\.toml:15: tables\[0\]\.residncy: unknown field \(valid: table, /);
  });

  it("refuses an unknown placement and lists the valid ones", () => {
    const error = configError(`${REGIONS}
[[tables]]
table = "users"
placement = "sharded"
`);
    expect(error.code).toBe("invalid_value");
    expect(error.line).toBe(13);
    expect(error.choices).toEqual(["geo_partitioned", "global_replicated", "pinned"]);
  });

  it("refuses a pinned table whose region is not in the topology, listing the regions", () => {
    const error = configError(`${REGIONS}
[[tables]]
table = "eu_audit"
placement = "pinned"
region = "eu-central"
`);
    expect(error.path).toBe("tables[0].region");
    expect(error.choices).toEqual(["eu-west", "us-east"]);
  });

  it("refuses a geo-partitioned table without a key and a pinned table without a region", () => {
    expect(configError(`${REGIONS}\n[[tables]]\ntable = "users"\nplacement = "geo_partitioned"\n`).path).toBe(
      "tables[0].key",
    );
    expect(configError(`${REGIONS}\n[[tables]]\ntable = "a"\nplacement = "pinned"\n`).code).toBe(
      "missing_field",
    );
  });

  it("refuses fields that belong to another placement", () => {
    const error = configError(
      `${REGIONS}\n[[tables]]\ntable = "c"\nplacement = "global_replicated"\nkey = "id"\n`,
    );
    expect(error.path).toBe("tables[0].key");
    expect(error.detail).toMatch(/does not apply to global_replicated/);
  });

  it('reads ids = "striped" on a geo-partitioned table and refuses it elsewhere or misspelt', () => {
    const config = parseConfig(
      `${REGIONS}\n[[tables]]\ntable = "t"\nplacement = "geo_partitioned"\nkey = "k"\nids = "striped"\n`,
    );
    expect(config.tables[0]).toMatchObject({ table: "t", ids: "striped" });
    const replicated = configError(
      `${REGIONS}\n[[tables]]\ntable = "c"\nplacement = "global_replicated"\nids = "striped"\n`,
    );
    expect(replicated.path).toBe("tables[0].ids");
    const misspelt = configError(
      `${REGIONS}\n[[tables]]\ntable = "t"\nplacement = "geo_partitioned"\nkey = "k"\nids = "stripe"\n`,
    );
    expect(misspelt.choices).toEqual(["refuse", "striped"]);
  });

  it("refuses strict residency on a replicated table", () => {
    const error = configError(
      `${REGIONS}\n[[tables]]\ntable = "c"\nplacement = "global_replicated"\nresidency = "strict"\n`,
    );
    expect(error.path).toBe("tables[0].residency");
  });

  it("requires exactly one home region", () => {
    const none = configError(`[[topology.regions]]\nid = "a"\nprimary = { host = "a" }\n`);
    expect(none.detail).toMatch(/none does/);
    const two = configError(
      `[[topology.regions]]\nid = "a"\nhome = true\nprimary = { host = "a" }\n[[topology.regions]]\nid = "b"\nhome = true\nprimary = { host = "b" }\n`,
    );
    expect(two.detail).toMatch(/a and b do/);
    expect(two.line).toBe(7);
  });

  it("requires a topology", () => {
    expect(configError(`[server]\nport = 7000\n`).code).toBe("missing_field");
  });

  it("refuses a region declared twice and a table given two policies", () => {
    expect(
      configError(`${REGIONS}\n[[topology.regions]]\nid = "us-east"\nprimary = { host = "x" }\n`).code,
    ).toBe("duplicate");
    const twice = `${REGIONS}\n[[tables]]\ntable = "t"\nplacement = "pinned"\nregion = "eu-west"\n`;
    expect(configError(twice + twice.slice(REGIONS.length)).code).toBe("duplicate");
  });

  it("reports a TOML syntax error with its line", () => {
    const error = configError(`[server]\nport = 6432\nhost = \n`);
    expect(error.code).toBe("syntax");
    expect(error.line).toBe(3);
  });

  it("reports a value of the wrong type at the line of its inline table", () => {
    const error = configError(
      `[[topology.regions]]\nid = "a"\nhome = true\nprimary = { host = "a", port = "5432" }\n`,
    );
    expect(error.code).toBe("wrong_type");
    expect(error.path).toBe("topology.regions[0].primary.port");
    expect(error.line).toBe(4);
  });

  it("reads a default placement for unlisted tables, defaulting a pinned one to the home region", () => {
    const config = parseConfig(`${REGIONS}\n[routing]\ndefault_placement = { placement = "pinned" }\n`);
    expect(config.routing.defaultPlacement).toEqual({ placement: "pinned", region: "eu-west" });
    const none = parseConfig(`${REGIONS}\n[routing]\ndefault_placement = "none"\n`);
    expect(none.routing.defaultPlacement).toBeUndefined();
  });

  it("reads a shared directory with its authority and leases, and refuses what it does not run", () => {
    const store = `${REGIONS}\n[directory_store]\n`;
    expect(parseConfig(`${store}shared = true\n`).directoryStore).toMatchObject({
      shared: true,
      authority: "home",
      pollMs: DEFAULTS.directoryStore.pollMs,
      leaseMs: DEFAULTS.directoryStore.leaseMs,
    });
    expect(
      parseConfig(`${store}shared = true\nauthority = "us-east"\npoll_ms = 200\nlease_ms = 600\n`)
        .directoryStore,
    ).toMatchObject({ shared: true, authority: "us-east", pollMs: 200, leaseMs: 600 });
    expect(
      parseConfig(`${store}shared = true\nauthority = "majority"\npoll_ms = 100\nlease_ms = 300\n`)
        .directoryStore,
    ).toMatchObject({ shared: true, authority: "majority", pollMs: 100, leaseMs: 300 });
    const nowhere = configError(`${store}shared = true\nauthority = "mars"\n`);
    expect(nowhere).toMatchObject({ code: "invalid_value", path: "directory_store.authority" });
    expect(nowhere.choices).toEqual(expect.arrayContaining(["home", "majority", "us-east", "eu-west"]));
    const short = configError(`${store}shared = true\npoll_ms = 500\nlease_ms = 1000\n`);
    expect(short).toMatchObject({ code: "invalid_value", path: "directory_store.lease_ms" });
    expect(short.message).toContain("at least 3 times poll_ms");
    const long = configError(`${store}shared = true\ntable = "geo.${"d".repeat(55)}"\n`);
    expect(long).toMatchObject({ code: "invalid_value", path: "directory_store.table" });
    expect(long.message).toContain("at most 54 bytes");
    expect(
      parseConfig(`${store}shared = true\ntable = "geo.${"d".repeat(54)}"\n`).directoryStore?.shared,
    ).toBe(true);
    for (const authority of ["us-east", "eu-west"]) {
      const error = configError(`${store}authority = "${authority}"\n`);
      expect(error).toMatchObject({
        code: "not_available",
        path: "directory_store.authority",
        choices: ["home"],
      });
      expect(error.message).toContain("set shared = true");
    }
    for (const field of ["poll_ms", "lease_ms"]) {
      const error = configError(`${store}${field} = 500\n`);
      expect(error).toMatchObject({ code: "not_available", path: `directory_store.${field}` });
      expect(error.line).toBe(store.split("\n").length);
      expect(error.message).toContain("remove the line");
    }
    expect(parseConfig(`${store}shared = false\nauthority = "home"\n`).directoryStore).toMatchObject({
      shared: false,
      authority: "home",
    });
  });

  it("reads workers as 1 to 16 or auto, and refuses anything else at its line", () => {
    const server = `${REGIONS}\n[server]\n`;
    expect(parseConfig(REGIONS).server.workers).toBe(1);
    expect(parseConfig(`${server}workers = 1\n`).server.workers).toBe(1);
    expect(parseConfig(`${server}workers = 4\n`).server.workers).toBe(4);
    expect(parseConfig(`${server}workers = 16\n`).server.workers).toBe(16);
    expect(parseConfig(`${server}workers = "auto"\n`).server.workers).toBe("auto");
    for (const value of ["0", "17", "1.5", '"many"', "true"]) {
      const error = configError(`${server}workers = ${value}\n`);
      expect(error.path, value).toBe("server.workers");
      expect(error.line, value).toBe(server.split("\n").length);
    }
    expect(configError(`${server}workers = "many"\n`).choices).toEqual(["1..16", '"auto"']);
  });

  it("resolves auto to one worker per core, at most 16", () => {
    expect(resolveWorkers("auto", 2)).toBe(2);
    expect(resolveWorkers("auto", 64)).toBe(MAX_WORKERS);
    expect(resolveWorkers("auto", 0)).toBe(1);
    expect(resolveWorkers(3, 64)).toBe(3);
  });

  it("refuses several workers over a directory store that is not shared, naming its field and the fix", () => {
    const store = `${REGIONS}\n[server]\nworkers = 2\n\n[directory_store]\nshared = false\n`;
    const error = configError(store);
    expect(error).toMatchObject({ code: "invalid_value", path: "directory_store.shared" });
    expect(error.line).toBe(store.split("\n").length - 1);
    expect(error.message).toMatch(/workers = 2 runs several worker processes.*set shared = true/);
    // Without a shared line the section's own line is named.
    const bare = `${REGIONS}\n[server]\nworkers = "auto"\n\n[directory_store]\n`;
    expect(configError(bare)).toMatchObject({
      path: "directory_store.shared",
      line: bare.split("\n").length - 1,
    });
    expect(
      parseConfig(`${REGIONS}\n[server]\nworkers = 2\n\n[directory_store]\nshared = true\n`).server.workers,
    ).toBe(2);
    // A fixed directory (no [directory_store]) never changes, so any number of workers may route on it.
    expect(parseConfig(`${REGIONS}\n[server]\nworkers = 2\n`).server.workers).toBe(2);
  });

  it("refuses several workers writing one decision log file at log_path", () => {
    const text = `${REGIONS}\n[server]\nworkers = 2\n\n[txn]\nlog_path = "/var/lib/geoproxy/one.log"\n`;
    const error = configError(text);
    expect(error).toMatchObject({
      code: "invalid_value",
      path: "txn.log_path",
      line: text.split("\n").length - 1,
    });
    expect(error.message).toContain("remove log_path");
  });

  it("refuses a --workers given beside such a configuration, naming the file and the field", () => {
    const config = parseConfig(`${REGIONS}\n[directory_store]\n`, "proxy.toml");
    expect(() => checkWorkers(config, 1, "--workers 1")).not.toThrow();
    expect(() => checkWorkers(config, 2, "--workers 2")).toThrow(
      /^proxy\.toml: directory_store\.shared: --workers 2 runs several worker processes/,
    );
  });

  it("reads the schema check interval, 60 s by default, and refuses one under a second at its line", () => {
    const server = `${REGIONS}\n[server]\n`;
    expect(parseConfig(REGIONS).server.schemaCheckIntervalMs).toBe(60_000);
    expect(parseConfig(`${server}schema_check_interval_ms = 5000\n`).server.schemaCheckIntervalMs).toBe(5000);
    const error = configError(`${server}schema_check_interval_ms = 999\n`);
    expect(error.path).toBe("server.schema_check_interval_ms");
    expect(error.line).toBe(server.split("\n").length);
  });

  it("reads the fast lane switch, on by default, and refuses a value that is not a bool at its line", () => {
    const server = `${REGIONS}\n[server]\n`;
    expect(parseConfig(REGIONS).server.fastLane).toBe(true);
    expect(parseConfig(`${server}fast_lane = false\n`).server.fastLane).toBe(false);
    const error = configError(`${server}fast_lane = "no"\n`);
    expect(error.path).toBe("server.fast_lane");
    expect(error.line).toBe(server.split("\n").length);
  });

  it("reads the directory store's move batch, 25 keys unless set, and refuses a batch of 0", () => {
    expect(parseConfig(`${REGIONS}\n[directory_store]\n`).directoryStore?.batch).toBe(25);
    expect(parseConfig(`${REGIONS}\n[directory_store]\nbatch = 5\n`).directoryStore?.batch).toBe(5);
    expect(configError(`${REGIONS}\n[directory_store]\nbatch = 0\n`).path).toBe("directory_store.batch");
  });

  it("reads a region's own network timeouts and leaves the others to [pool]", () => {
    const config = parseConfig(`
[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "eu.db" }
connect_timeout_ms = 800
tcp_keepalive_ms = 0

[[topology.regions]]
id = "us-east"
primary = { host = "us.db" }
replicas = [{ host = "us-r1.db" }]
unreachable_timeout_ms = 20000
lookup_timeout_ms = 1500

[[topology.regions]]
id = "ap-south"
primary = { host = "ap.db" }

[pool]
connect_timeout_ms = 60000
tcp_keepalive_ms = 30000
`);
    const [eu, us, ap] = config.regions;
    expect(eu!.timeouts).toEqual({ connectTimeoutMs: 800, tcpKeepaliveMs: 0 });
    expect(us!.timeouts).toEqual({ unreachableTimeoutMs: 20_000, lookupTimeoutMs: 1500 });
    expect(ap!.timeouts).toBeUndefined();
    expect(regionTimeouts(config.pool, eu!)).toEqual({
      connectTimeoutMs: 800,
      unreachableTimeoutMs: DEFAULTS.pool.unreachableTimeoutMs,
      lookupTimeoutMs: DEFAULTS.pool.lookupTimeoutMs,
      tcpKeepaliveMs: 0,
    });
    expect(regionTimeouts(config.pool, us!)).toEqual({
      connectTimeoutMs: 60_000,
      unreachableTimeoutMs: 20_000,
      lookupTimeoutMs: 1500,
      tcpKeepaliveMs: 30_000,
    });
    // A region that sets none has exactly [pool]'s, and without [pool] those are the defaults.
    expect(regionTimeouts(config.pool, ap!)).toEqual({
      connectTimeoutMs: 60_000,
      unreachableTimeoutMs: DEFAULTS.pool.unreachableTimeoutMs,
      lookupTimeoutMs: DEFAULTS.pool.lookupTimeoutMs,
      tcpKeepaliveMs: 30_000,
    });
    const bare = parseConfig(REGIONS);
    expect(regionTimeouts(bare.pool, bare.regions[1]!)).toEqual({
      connectTimeoutMs: DEFAULTS.pool.connectTimeoutMs,
      unreachableTimeoutMs: DEFAULTS.pool.unreachableTimeoutMs,
      lookupTimeoutMs: DEFAULTS.pool.lookupTimeoutMs,
      tcpKeepaliveMs: DEFAULTS.pool.tcpKeepaliveMs,
    });
  });

  it.each([
    ["connect_timeout_ms", 0, "1..86400000"],
    ["unreachable_timeout_ms", 9, "10..86400000"],
    ["lookup_timeout_ms", 0, "1..86400000"],
    ["tcp_keepalive_ms", -1, "0..86400000"],
    ["connect_timeout_ms", 86_400_001, "1..86400000"],
  ])("refuses a region's %s of %d at its line, naming the field and the range %s", (field, value, range) => {
    const text = `${REGIONS}${field} = ${value}\n`;
    const error = configError(text);
    expect(error.code).toBe("invalid_value");
    expect(error.path).toBe(`topology.regions[1].${field}`);
    expect(error.line).toBe(text.split("\n").length - 1);
    expect(error.message).toBe(
      `test.toml:${error.line}: topology.regions[1].${field}: ${value} is outside ${range}`,
    );
    // The same value is refused alike in [pool], whose range it shares.
    expect(configError(`${REGIONS}\n[pool]\n${field} = ${value}\n`).detail).toBe(
      `${value} is outside ${range}`,
    );
  });

  it("refuses a region's timeout that is not an integer, and a field of [pool] regions do not take", () => {
    const wrong = configError(`${REGIONS}connect_timeout_ms = "5s"\n`);
    expect(wrong).toMatchObject({ code: "wrong_type", path: "topology.regions[1].connect_timeout_ms" });
    const unknown = configError(`${REGIONS}idle_timeout_ms = 1000\n`);
    expect(unknown).toMatchObject({ code: "unknown_field", path: "topology.regions[1].idle_timeout_ms" });
    expect(unknown.choices).toEqual([
      "id",
      "location",
      "primary",
      "replicas",
      "home",
      "connect_timeout_ms",
      "unreachable_timeout_ms",
      "lookup_timeout_ms",
      "tcp_keepalive_ms",
    ]);
  });

  it("refuses a pool whose minimum exceeds its maximum and an out-of-range port", () => {
    expect(configError(`${REGIONS}\n[pool]\nmin = 30\nmax = 10\n`).path).toBe("pool.min");
    expect(configError(`${REGIONS}\n[server]\nport = 70000\n`).path).toBe("server.port");
  });

  it("reads auth, tls and admin sections with their documented fields only", () => {
    const config = parseConfig(`${REGIONS}
[auth]
method = "scram-sha-256"
operators = ["ops"]
users = [{ name = "app", password = "secret" }]

[tls]
cert = "server.crt"
key = "server.key"
backend_sslmode = "verify-full"

[admin]
port = 9100
`);
    expect(config.auth).toEqual({
      method: "scram-sha-256",
      operators: ["ops"],
      users: [{ name: "app", password: "secret" }],
      passthrough: false,
      lookup: DEFAULTS.auth.lookup,
      verifierQuery: DEFAULTS.auth.verifierQuery,
      verifierCacheMs: DEFAULTS.auth.verifierCacheMs,
      failureDelayMs: DEFAULTS.auth.failureDelayMs,
      failureDelayMaxMs: DEFAULTS.auth.failureDelayMaxMs,
      failureWindowMs: DEFAULTS.auth.failureWindowMs,
      timeoutMs: DEFAULTS.auth.timeoutMs,
      startupTimeoutMs: DEFAULTS.auth.startupTimeoutMs,
      maxUnauthenticated: DEFAULTS.auth.maxUnauthenticated,
      maxUnauthenticatedPerAddress: DEFAULTS.auth.maxUnauthenticatedPerAddress,
    });
    expect(config.tls.backendSslmode).toBe("verify-full");
    expect(config.admin).toEqual({ host: "127.0.0.1", port: 9100, tls: false });
    expect(configError(`${REGIONS}\n[tls]\nbackend_sslmode = "allow"\n`).choices).toContain("verify-ca");
    expect(configError(`${REGIONS}\n[admin]\nbind = "0.0.0.0"\n`).code).toBe("unknown_field");
  });

  it("refuses trust with a secret in auth.users that nothing uses, naming the file, the field and the methods that check one", () => {
    // Every endpoint names its own user: no backend login is made with a user's password either.
    const own = REGIONS.replace('{ host = "eu.db" }', '{ host = "eu.db", user = "geo" }').replace(
      "port = 6543 }",
      'port = 6543, user = "geo" }',
    );
    const written = configError(
      `${own}\n[auth]\nmethod = "trust"\nusers = [{ name = "app", password = "secret" }]\n`,
    );
    expect(written.code).toBe("invalid_value");
    expect(written.path).toBe("auth.method");
    expect(written.choices).toEqual(["scram-sha-256", "md5"]);
    expect(written.message).toMatch(/^test\.toml:\d+: auth\.method: method "trust" checks no password/);
    expect(written.message).toContain('auth.users "app"');
    // Trust is the default: the error then points at the secret. A verifier never logs in anywhere.
    const defaulted = configError(
      `${REGIONS}\n[auth]\nusers = [{ name = "ops" }, { name = "app", verifier = "md5${"0".repeat(32)}" }]\n`,
    );
    expect(defaulted.path).toBe("auth.users[1].verifier");
    expect(defaulted.choices).toEqual(["scram-sha-256", "md5"]);
  });

  it("keeps trust with passwords that log in to backends whose endpoint names no user, and users without a secret", () => {
    const backends = parseConfig(
      `${REGIONS}\n[auth]\nmethod = "trust"\nusers = [{ name = "app", password = "secret" }]\n`,
      "test.toml",
    );
    expect(backends.auth.users).toEqual([{ name: "app", password: "secret" }]);
    expect(parseConfig(`${REGIONS}\n[auth]\nusers = [{ name = "ops" }]\n`, "test.toml").auth.method).toBe(
      "trust",
    );
  });

  it("names the file when it cannot be read", () => {
    expect(() => loadConfig("/nonexistent/geoproxy.toml")).toThrow(/\/nonexistent\/geoproxy.toml/);
  });
});
