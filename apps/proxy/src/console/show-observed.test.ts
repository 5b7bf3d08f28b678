import { PgError } from "@geo/proto";
import { describe, expect, it } from "vitest";
import { exampleContext } from "./example-context.js";
import { type ConsoleRows, runConsoleCommand } from "./index.js";
import { observedFixture } from "./observed-fixture.js";
import { SHOW_ALERTS_COLUMNS } from "./show-alerts.js";
import { SHOW_CLIENTS_COLUMNS } from "./show-clients.js";
import { SHOW_HEALTH_COLUMNS } from "./show-health.js";
import { SHOW_IN_DOUBT_COLUMNS } from "./show-in-doubt.js";
import { SHOW_STATS_COLUMNS } from "./show-stats.js";

async function run(text: string, observed = observedFixture()): Promise<ConsoleRows> {
  const result = runConsoleCommand(text, { ...(await exampleContext()), observed });
  if (result instanceof PgError) throw result;
  return result;
}

describe("SHOW HEALTH", () => {
  it("lists every endpoint region by region with its health, NULL where nothing was read yet", async () => {
    const result = await run("show health;");
    expect(result.columns).toEqual([...SHOW_HEALTH_COLUMNS]);
    expect(result.tag).toBe("SHOW");
    expect(result.rows).toEqual([
      ["eu-west", "yes", "primary", "127.0.0.1:5433", "up", "no", "0", "no"],
      ["eu-west", "yes", "replica", "127.0.0.1:5533", "unknown", null, null, "yes"],
      ["us-east", "no", "primary", "127.0.0.1:5434", "down", null, null, "no"],
    ]);
  });
});

describe("SHOW ALERTS", () => {
  it("states each alert once with the time it became true", async () => {
    const result = await run("SHOW ALERTS");
    expect(result.columns).toEqual([...SHOW_ALERTS_COLUMNS]);
    expect(result.rows).toEqual([
      [
        "backend_down",
        "127.0.0.1:5434",
        "the primary of us-east cannot be reached",
        "2026-11-30 10:01:02+00",
      ],
    ]);
  });

  it("answers no rows when nothing is wrong", async () => {
    expect((await run("SHOW ALERTS", observedFixture({ alerts: () => [] }))).rows).toEqual([]);
  });
});

describe("SHOW STATS", () => {
  it("shows totals, plan kinds with percentiles, regions, read finishes, outcomes and errors", async () => {
    const result = await run("SHOW STATS");
    expect(result.columns).toEqual([...SHOW_STATS_COLUMNS]);
    const rows = result.rows.map((row) => row.join("|"));
    expect(rows).toEqual([
      "total|statements|15|||",
      "total|left_home|4|||",
      "plan|one_region|10|0.500|1.250|2.000",
      "plan|scatter|2|||",
      "plan|distributed_write|0|||",
      "plan|each_region|0|||",
      "plan|console|2|||",
      "plan|refused|1|||",
      "region|eu-west|9|||",
      "region|us-east|4|||",
      "read_finish|merged_in_proxy|1|||",
      "read_finish|finished_in_home|1|||",
      "read_finish|gathered|0|||",
      "transaction|one_phase|3|||",
      "transaction|two_phase_committed|0|||",
      "transaction|aborted|1|||",
      "transaction|in_doubt|0|||",
      "error|0A000|1|||",
      "error|42P01|2|||",
    ]);
    expect(result.rows[3]?.[3]).toBeNull();
  });

  it("refuses words after the command with 42601", async () => {
    const result = runConsoleCommand("SHOW STATS everything", {
      ...(await exampleContext()),
      observed: observedFixture(),
    });
    expect((result as PgError).code).toBe("42601");
  });
});

describe("SHOW IN DOUBT", () => {
  it("lists decided two-phase commits with the regions still to acknowledge, oldest first", async () => {
    const inDoubt = () => [
      {
        gid: "geo_eu_17",
        decision: "commit" as const,
        regions: ["eu-west", "us-east"],
        pending: ["us-east"],
        decidedAt: "2026-11-30T10:02:00.000Z",
      },
    ];
    const result = await run("SHOW IN DOUBT", observedFixture({ inDoubt }));
    expect(result.columns).toEqual([...SHOW_IN_DOUBT_COLUMNS]);
    expect(result.rows).toEqual([
      ["geo_eu_17", "commit", "eu-west, us-east", "us-east", "2026-11-30 10:02:00+00"],
    ]);
  });
});

describe("SHOW CLIENTS", () => {
  it("lists connections oldest first with user, database, address, state and statement count", async () => {
    const result = await run("SHOW CLIENTS");
    expect(result.columns).toEqual([...SHOW_CLIENTS_COLUMNS]);
    expect(result.rows).toEqual([
      ["3", "postgres", "shop", "127.0.0.1:50001", "active", "2026-11-30 09:59:00+00", "1"],
      ["7", "app", "shop", "127.0.0.1:50002", "idle in transaction", "2026-11-30 10:00:05+00", "12"],
    ]);
  });
});

describe("commands reading observations", () => {
  it("answer 0A000 in a context that observes nothing", async () => {
    for (const command of ["SHOW HEALTH", "SHOW ALERTS", "SHOW STATS", "SHOW IN DOUBT", "SHOW CLIENTS"]) {
      const result = runConsoleCommand(command, await exampleContext());
      expect((result as PgError).code, command).toBe("0A000");
    }
  });
});
