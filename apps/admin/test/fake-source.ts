import type {
  AdminSource,
  Alert,
  KeyLocation,
  KeyLookupFailure,
  ProxyMetrics,
  ProxySnapshot,
  RefusedShape,
  RegionStatus,
  RouteDecision,
  SchemaDriftStatus,
  SharedDirectoryStatus,
} from "../src/index.js";

export const REGIONS = ["eu-west", "us-east", "ap-south"] as const;

/** A proxy stand-in whose numbers the test moves by driving a real ProxyMetrics. */
export class FakeSource implements AdminSource {
  readyAnswer: boolean | "hang" = true;
  alerts: Alert[] = [];
  decisions: RouteDecision[] = [];
  refusedShapes: RefusedShape[] = [];
  schemaDrift: SchemaDriftStatus = { checkedAt: null, reference: null, tables: [] };
  /** Set to make the proxy one of a shared directory's. */
  shared: SharedDirectoryStatus | undefined;
  snapshotCalls = 0;
  readonly #metrics: ProxyMetrics;
  readonly #startedAt = Date.now();

  constructor(metrics: ProxyMetrics) {
    this.#metrics = metrics;
  }

  regions(): RegionStatus[] {
    return [
      {
        id: "eu-west",
        home: true,
        endpoints: [
          {
            endpoint: "eu.db:5432",
            role: "primary",
            health: "up",
            inRecovery: false,
            lagBytes: 0,
            drained: false,
          },
          {
            endpoint: "eu-r.db:5432",
            role: "replica",
            health: "up",
            inRecovery: true,
            lagBytes: 4096,
            drained: false,
          },
        ],
      },
      {
        id: "us-east",
        home: false,
        endpoints: [
          {
            endpoint: "us.db:5432",
            role: "primary",
            health: "up",
            inRecovery: false,
            lagBytes: 0,
            drained: false,
          },
        ],
      },
      {
        id: "ap-south",
        home: false,
        endpoints: [
          {
            endpoint: "ap.db:5432",
            role: "primary",
            health: "down",
            inRecovery: null,
            lagBytes: null,
            drained: false,
          },
        ],
      },
    ];
  }

  pools() {
    return [
      { endpoint: "eu.db:5432", region: "eu-west", idle: 3, busy: 2, waiting: 0, max: 20 },
      { endpoint: "us.db:5432", region: "us-east", idle: 1, busy: 0, waiting: 4, max: 20 },
    ];
  }

  cache() {
    return { hits: 90, misses: 10, entries: 7, capacity: 4096 };
  }

  snapshot(): ProxySnapshot {
    this.snapshotCalls += 1;
    const m = this.#metrics;
    return {
      node: "geo-test",
      takenAt: new Date().toISOString(),
      uptimeSeconds: (Date.now() - this.#startedAt) / 1000,
      homeRegion: "eu-west",
      regions: this.regions(),
      pools: this.pools(),
      traffic: m.traffic(),
      latency: m.latency(),
      transactions: {
        outcomes: m.transactionOutcomes(),
        inDoubt: [
          {
            gid: "geo_17_3",
            decision: "commit",
            regions: ["eu-west", "ap-south"],
            pending: ["ap-south"],
            decidedAt: "2026-01-01T00:00:00.000Z",
          },
        ],
      },
      alerts: this.alerts,
      clients: { connected: m.connectedClients, max: 1000 },
      cache: this.cache(),
      placement: {
        regions: [
          { id: "eu-west", home: true, keys: 4, rowsIn: 3, rowsOut: 0, bytesIn: 9000, bytesOut: 2000 },
          { id: "us-east", home: false, keys: 2, rowsIn: 0, rowsOut: 3, bytesIn: 4000, bytesOut: 1000 },
          { id: "ap-south", home: false, keys: 1, rowsIn: 0, rowsOut: 0, bytesIn: 0, bytesOut: 0 },
        ],
        moves: [{ keys: ["carol"], to: "eu-west", startedAt: "2026-01-01T00:00:00.000Z" }],
        movesDone: 1,
      },
      decisions: this.decisions,
      refusedShapes: this.refusedShapes,
      schemaDrift: this.schemaDrift,
      ...(this.shared === undefined ? {} : { shared: this.shared }),
    };
  }

  whereIs(table: string, key: string): KeyLocation | KeyLookupFailure {
    if (table !== "users") {
      return { error: `no placement for table ${table}`, sqlstate: "42P01", hint: "add a [[tables]] entry" };
    }
    if (key === "bad") return { error: "the key is not an integer", sqlstate: "22P02" };
    return { table, key, region: key.startsWith("b") ? "us-east" : "eu-west", state: "resident" };
  }

  ready(): Promise<boolean> {
    if (this.readyAnswer === "hang") return new Promise(() => {});
    return Promise.resolve(this.readyAnswer);
  }
}

/** Runs one statement's worth of hot-path calls. */
export function runStatement(metrics: ProxyMetrics, i: number): void {
  const plan = i % 7 === 0 ? "scatter" : "one_region";
  metrics.observeStatement(plan, 0.001 + (i % 10) / 1000);
  metrics.countRegions(plan === "scatter" ? ["eu-west", "us-east"] : ["eu-west"]);
  if (plan === "scatter") metrics.countMultiRegionRead("merged_in_proxy");
}
