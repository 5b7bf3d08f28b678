import type { ConsoleClient, ObservedState } from "./context.js";

/** A fixed ObservedState for the console's unit tests: two regions, one alert, a few counts. */
export function observedFixture(overrides: Partial<ObservedState> = {}): ObservedState {
  const clients: ConsoleClient[] = [
    {
      id: 7,
      user: "app",
      database: "shop",
      address: "127.0.0.1:50002",
      state: "idle in transaction",
      connectedAt: new Date("2026-11-30T10:00:05.250Z"),
      statements: 12,
    },
    {
      id: 3,
      user: "postgres",
      database: "shop",
      address: "127.0.0.1:50001",
      state: "active",
      connectedAt: new Date("2026-11-30T09:59:00.000Z"),
      statements: 1,
    },
  ];
  return {
    regions: () => [
      {
        id: "eu-west",
        home: true,
        endpoints: [
          {
            endpoint: "127.0.0.1:5433",
            role: "primary",
            health: "up",
            inRecovery: false,
            lagBytes: 0,
            drained: false,
          },
          {
            endpoint: "127.0.0.1:5533",
            role: "replica",
            health: "unknown",
            inRecovery: null,
            lagBytes: null,
            drained: true,
          },
        ],
      },
      {
        id: "us-east",
        home: false,
        endpoints: [
          {
            endpoint: "127.0.0.1:5434",
            role: "primary",
            health: "down",
            inRecovery: null,
            lagBytes: null,
            drained: false,
          },
        ],
      },
    ],
    alerts: () => [
      {
        name: "backend_down",
        subject: "127.0.0.1:5434",
        message: "the primary of us-east cannot be reached",
        since: "2026-11-30T10:01:02.345Z",
      },
    ],
    traffic: () => ({
      statements: 15,
      byPlan: { one_region: 10, scatter: 2, distributed_write: 0, each_region: 0, console: 2, refused: 1 },
      byRegion: { "us-east": 4, "eu-west": 9 },
      leftHome: 4,
      multiRegionReads: { merged_in_proxy: 1, finished_in_home: 1, gathered: 0 },
      errors: { "42P01": 2, "0A000": 1 },
    }),
    latency: () => [
      { plan: "one_region", samples: 10, p50Ms: 0.5, p95Ms: 1.25, p99Ms: 2 },
      { plan: "scatter", samples: 0, p50Ms: null, p95Ms: null, p99Ms: null },
    ],
    transactionOutcomes: () => ({ one_phase: 3, two_phase_committed: 0, aborted: 1, in_doubt: 0 }),
    inDoubt: () => [],
    clients: () => clients,
    ...overrides,
  };
}
