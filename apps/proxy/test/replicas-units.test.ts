import { DEFAULTS, parseConfig, Topology } from "@geo/core";
import { PgError } from "@geo/proto";
import { afterEach, describe, expect, it } from "vitest";
import { exampleContext } from "../src/console/example-context.js";
import type { ConsoleContext, ConsoleRows } from "../src/console/index.js";
import { runConsoleCommand } from "../src/console/index.js";
import { ReplicaService } from "../src/replicas/replica-service.js";

const started: ReplicaService[] = [];

afterEach(async () => {
  for (const service of started.splice(0)) await service.close(0);
});

function toml(auth: string, replicas = true): string {
  return `[[topology.regions]]
id = "eu-west"
home = true
primary = { host = "10.0.0.5", port = 5432 }
${replicas ? 'replicas = [{ host = "10.0.0.6", port = 5432 }]' : ""}

[[tables]]
table = "items"
placement = "pinned"
region = "eu-west"

${auth}`;
}

const SCRAM = `[auth]
method = "scram-sha-256"
operators = ["ops"]
users = [{ name = "ops", password = "x" }, { name = "app", password = "y" }]`;

async function context(
  text: string,
  user: string,
  clientAddress: string,
): Promise<{ ctx: ConsoleContext; service: ReplicaService | undefined }> {
  const config = parseConfig(text, "units.toml");
  const service = ReplicaService.create(config, Topology.fromConfig(config));
  if (service !== undefined) started.push(service);
  const ctx = { ...(await exampleContext({ config })), user, clientAddress, replicas: service };
  return { ctx, service };
}

describe("DRAIN and UNDRAIN permissions", () => {
  it("accepts DRAIN from a loopback client under trust, and marks the replica drained", async () => {
    const { ctx, service } = await context(toml(""), "postgres", "::ffff:127.0.0.1");
    const result = runConsoleCommand("DRAIN 10.0.0.6:5432", ctx) as ConsoleRows;
    expect(result.tag).toBe("DRAIN");
    expect(result.rows).toEqual([["eu-west", "10.0.0.6:5432", "unknown", "yes"]]);
    expect(service?.health.status("10.0.0.6:5432")?.drained).toBe(true);
    expect((runConsoleCommand("UNDRAIN '10.0.0.6:5432'", ctx) as ConsoleRows).rows[0]?.[3]).toBe("no");
  });

  it("refuses DRAIN from a remote client under trust with 42501", async () => {
    const { ctx, service } = await context(toml(""), "postgres", "10.1.2.3");
    const result = runConsoleCommand("DRAIN 10.0.0.6:5432", ctx);
    expect(result).toBeInstanceOf(PgError);
    expect((result as PgError).code).toBe("42501");
    expect(service?.health.status("10.0.0.6:5432")?.drained).toBe(false);
  });

  it("accepts an operator and refuses any other role once passwords are required, wherever they connect from", async () => {
    const operator = await context(toml(SCRAM), "ops", "10.1.2.3");
    expect((runConsoleCommand("DRAIN 10.0.0.6:5432", operator.ctx) as ConsoleRows).tag).toBe("DRAIN");
    const app = await context(toml(SCRAM), "app", "127.0.0.1");
    expect((runConsoleCommand("UNDRAIN 10.0.0.6:5432", app.ctx) as PgError).code).toBe("42501");
  });

  it("answers 55000 when the topology lists no replica", async () => {
    const { ctx, service } = await context(toml("", false), "postgres", "127.0.0.1");
    expect(service).toBeUndefined();
    expect((runConsoleCommand("DRAIN 10.0.0.6:5432", ctx) as PgError).code).toBe("55000");
  });
});

describe("replica configuration", () => {
  it("reads max_replica_lag_bytes and the probe settings from [routing], with defaults", () => {
    const defaults = parseConfig(toml(""), "units.toml").routing;
    expect(defaults.maxReplicaLagBytes).toBe(DEFAULTS.routing.maxReplicaLagBytes);
    expect(defaults.healthIntervalMs).toBe(1000);
    const set = parseConfig(
      `${toml("")}\n[routing]\nmax_replica_lag_bytes = 0\nhealth_interval_ms = 250\nhealth_failures_to_down = 1\n`,
      "units.toml",
    ).routing;
    expect(set).toMatchObject({ maxReplicaLagBytes: 0, healthIntervalMs: 250, healthFailuresToDown: 1 });
    expect(() => parseConfig(`${toml("")}\n[routing]\nhealth_interval_ms = 0\n`, "units.toml")).toThrow(
      /health_interval_ms/,
    );
  });

  it("creates no monitor for a topology without replicas, so such a proxy sends no probes", () => {
    const config = parseConfig(toml("", false), "units.toml");
    expect(ReplicaService.create(config, Topology.fromConfig(config))).toBeUndefined();
  });
});
