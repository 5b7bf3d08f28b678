import { describe, expect, it } from "vitest";
import { ClientError, type ClientErrorCode, clusterDsnsFromEnv } from "../src/index.js";

describe("clusterDsnsFromEnv: resolution", () => {
  const cases: {
    name: string;
    prefix?: string;
    env: Record<string, string>;
    primary: string;
    replica: string | undefined;
    sources: { primary: string[]; replica: string[] };
  }[] = [
    {
      name: "a whole-URL primary alone runs single-pool",
      env: { DATABASE_URL: "postgres://app@db-rw:5432/orders" },
      primary: "postgres://app@db-rw:5432/orders",
      replica: undefined,
      sources: { primary: ["DATABASE_URL"], replica: [] },
    },
    {
      name: "the prefixed URL wins over the bare one",
      prefix: "ORDERS_",
      env: {
        ORDERS_DATABASE_URL: "postgres://app@orders-rw/orders",
        DATABASE_URL: "postgres://app@other/other",
      },
      primary: "postgres://app@orders-rw/orders",
      replica: undefined,
      sources: { primary: ["ORDERS_DATABASE_URL"], replica: [] },
    },
    {
      name: "a prefix falls back to the bare name, and gains its underscore",
      prefix: "ORDERS",
      env: {
        DATABASE_URL: "postgres://app@db-rw/orders",
        ORDERS_DATABASE_RO_URL: "postgres://app@db-ro/orders",
      },
      primary: "postgres://app@db-rw/orders",
      replica: "postgres://app@db-ro/orders",
      sources: { primary: ["DATABASE_URL"], replica: ["ORDERS_DATABASE_RO_URL"] },
    },
    {
      name: "the read-only URL is taken as written",
      env: {
        DATABASE_URL: "postgres://app@db-rw/orders",
        DATABASE_RO_URL: "postgresql://reader@db-ro:6432/orders",
      },
      primary: "postgres://app@db-rw/orders",
      replica: "postgresql://reader@db-ro:6432/orders",
      sources: { primary: ["DATABASE_URL"], replica: ["DATABASE_RO_URL"] },
    },
    {
      name: "parts build the primary, encoding what a URL cannot hold raw",
      env: {
        DB_HOST: "db-rw",
        DB_PORT: "6543",
        DB_USER: "app user",
        DB_PASSWORD: "p@ss/w:rd",
        DB_NAME: "orders",
        DB_SSLMODE: "require",
      },
      primary: "postgres://app%20user:p%40ss%2Fw%3Ard@db-rw:6543/orders?sslmode=require",
      replica: undefined,
      sources: {
        primary: ["DB_HOST", "DB_USER", "DB_NAME", "DB_PORT", "DB_PASSWORD", "DB_SSLMODE"],
        replica: [],
      },
    },
    {
      name: "parts default the port to 5432 and may omit the password",
      env: { DB_HOST: "::1", DB_USER: "app", DB_NAME: "orders" },
      primary: "postgres://app@[::1]:5432/orders",
      replica: undefined,
      sources: { primary: ["DB_HOST", "DB_USER", "DB_NAME"], replica: [] },
    },
    {
      name: "a read-only host takes every other field from the primary's parts",
      prefix: "APP_",
      env: {
        APP_DB_HOST: "db-rw",
        DB_USER: "app",
        DB_PASSWORD: "s3cret",
        APP_DB_NAME: "orders",
        DB_RO_HOST: "db-ro",
      },
      primary: "postgres://app:s3cret@db-rw:5432/orders",
      replica: "postgres://app:s3cret@db-ro:5432/orders",
      sources: {
        primary: ["APP_DB_HOST", "DB_USER", "APP_DB_NAME", "DB_PASSWORD"],
        replica: ["DB_RO_HOST", "DB_USER", "APP_DB_NAME", "DB_PASSWORD"],
      },
    },
    {
      name: "a read-only URL may stand beside a primary given in parts",
      env: {
        DB_HOST: "db-rw",
        DB_USER: "app",
        DB_NAME: "orders",
        DATABASE_RO_URL: "postgres://reader@db-ro/orders",
      },
      primary: "postgres://app@db-rw:5432/orders",
      replica: "postgres://reader@db-ro/orders",
      sources: { primary: ["DB_HOST", "DB_USER", "DB_NAME"], replica: ["DATABASE_RO_URL"] },
    },
    {
      name: "empty values count as unset",
      prefix: "APP_",
      env: {
        APP_DATABASE_URL: "",
        DATABASE_URL: "postgres://app@db-rw/orders",
        DB_RO_HOST: "",
        DATABASE_RO_URL: "",
      },
      primary: "postgres://app@db-rw/orders",
      replica: undefined,
      sources: { primary: ["DATABASE_URL"], replica: [] },
    },
  ];

  for (const row of cases) {
    it(row.name, () => {
      const dsns = clusterDsnsFromEnv(row.prefix, row.env);
      expect(dsns).toEqual({ primary: row.primary, replica: row.replica, sources: row.sources });
    });
  }

  it("reads process.env when no environment is passed", () => {
    const saved = process.env.GEOCLIENTTEST_DATABASE_URL;
    process.env.GEOCLIENTTEST_DATABASE_URL = "postgres://app@from-process/orders";
    try {
      expect(clusterDsnsFromEnv("GEOCLIENTTEST_").primary).toBe("postgres://app@from-process/orders");
    } finally {
      if (saved === undefined) delete process.env.GEOCLIENTTEST_DATABASE_URL;
      else process.env.GEOCLIENTTEST_DATABASE_URL = saved;
    }
  });
});

describe("clusterDsnsFromEnv: errors name the variable that was actually read", () => {
  const cases: {
    name: string;
    prefix?: string;
    env: Record<string, string>;
    code: ClientErrorCode;
    variables: string[];
    absent?: string[];
  }[] = [
    {
      name: "nothing set",
      prefix: "APP_",
      env: {},
      code: "primary_missing",
      variables: ["APP_DATABASE_URL or DATABASE_URL", "APP_DB_HOST or DB_HOST"],
    },
    {
      name: "nothing set, no prefix",
      env: {},
      code: "primary_missing",
      variables: ["DATABASE_URL", "DB_HOST"],
    },
    {
      name: "a URL and a host for the primary",
      prefix: "APP_",
      env: { APP_DATABASE_URL: "postgres://a@h/d", DB_HOST: "h" },
      code: "primary_conflict",
      variables: ["APP_DATABASE_URL", "DB_HOST"],
    },
    {
      name: "a host without a user",
      env: { DB_HOST: "h", DB_NAME: "d" },
      code: "primary_part_missing",
      variables: ["DB_HOST", "DB_USER"],
    },
    {
      name: "a prefixed host without a database name",
      prefix: "APP_",
      env: { APP_DB_HOST: "h", DB_USER: "u" },
      code: "primary_part_missing",
      variables: ["APP_DB_HOST", "APP_DB_NAME or DB_NAME"],
    },
    {
      name: "a read-only URL and a read-only host",
      env: { DATABASE_URL: "postgres://a@h/d", DATABASE_RO_URL: "postgres://a@r/d", DB_RO_HOST: "r" },
      code: "replica_conflict",
      variables: ["DATABASE_RO_URL", "DB_RO_HOST"],
    },
    {
      name: "a bare read-only host next to a prefixed whole-URL primary",
      prefix: "APP_",
      env: { APP_DATABASE_URL: "postgres://a@h/d", DB_RO_HOST: "r" },
      code: "replica_host_without_parts",
      variables: ["DB_RO_HOST", "APP_DATABASE_URL"],
      absent: ["APP_DB_RO_HOST"],
    },
    {
      name: "a prefixed read-only host next to a bare whole-URL primary",
      prefix: "APP_",
      env: { DATABASE_URL: "postgres://a@h/d", APP_DB_RO_HOST: "r" },
      code: "replica_host_without_parts",
      variables: ["APP_DB_RO_HOST", "DATABASE_URL"],
    },
    {
      name: "a primary URL that does not parse",
      env: { DATABASE_URL: "not a url" },
      code: "invalid_url",
      variables: ["DATABASE_URL"],
    },
    {
      name: "a primary URL of another scheme",
      prefix: "APP_",
      env: { APP_DATABASE_URL: "mysql://a:hunter2@h/d" },
      code: "invalid_url",
      variables: ["APP_DATABASE_URL"],
    },
    {
      name: "a primary URL without a host",
      env: { DATABASE_URL: "postgres:///d" },
      code: "invalid_url",
      variables: ["DATABASE_URL"],
    },
    {
      name: "a read-only URL that does not parse",
      env: { DATABASE_URL: "postgres://a@h/d", DATABASE_RO_URL: "postgres://a:hunter2@bad host/d" },
      code: "invalid_url",
      variables: ["DATABASE_RO_URL"],
    },
    {
      name: "a read-only URL that does not parse, next to parts",
      env: { DB_HOST: "h", DB_USER: "u", DB_NAME: "d", DATABASE_RO_URL: "nope" },
      code: "invalid_url",
      variables: ["DATABASE_RO_URL"],
    },
    {
      name: "a host that cannot form a URL",
      env: { DB_HOST: "bad host", DB_USER: "u", DB_NAME: "d" },
      code: "invalid_url",
      variables: ["DB_HOST"],
    },
    {
      name: "a read-only host that cannot form a URL",
      prefix: "APP_",
      env: { DB_HOST: "h", DB_USER: "u", DB_NAME: "d", APP_DB_RO_HOST: "bad host" },
      code: "invalid_url",
      variables: ["APP_DB_RO_HOST"],
    },
    {
      name: "a port that is not a number",
      prefix: "APP_",
      env: { DB_HOST: "h", DB_USER: "u", DB_NAME: "d", APP_DB_PORT: "54x2" },
      code: "invalid_port",
      variables: ["APP_DB_PORT"],
    },
    {
      name: "a port of zero",
      env: { DB_HOST: "h", DB_USER: "u", DB_NAME: "d", DB_PORT: "0" },
      code: "invalid_port",
      variables: ["DB_PORT"],
    },
    {
      name: "a port above 65535",
      env: { DB_HOST: "h", DB_USER: "u", DB_NAME: "d", DB_PORT: "70000" },
      code: "invalid_port",
      variables: ["DB_PORT"],
    },
  ];

  for (const row of cases) {
    it(`${row.name}: ${row.code} naming ${row.variables.join(", ")}`, () => {
      let caught: unknown;
      try {
        clusterDsnsFromEnv(row.prefix, row.env);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ClientError);
      const error = caught as ClientError;
      expect(error.code).toBe(row.code);
      expect(error.variables).toEqual(row.variables);
      for (const variable of row.variables) expect(error.message).toContain(variable);
      for (const variable of row.absent ?? []) expect(error.message).not.toContain(variable);
      expect(error.message).not.toContain("hunter2");
      expect(error.hint.length).toBeGreaterThan(0);
    });
  }
});
