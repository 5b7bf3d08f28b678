import type { GeoConfig } from "@geo/core";
import type { ConsoleContext } from "../console/context.js";
import type { TxnService } from "../distributed/txn-service.js";
import type { RegionPools } from "../executor/region-pools.js";
import type { RestripeContext } from "../ids/restripe-command.js";
import type { Logger } from "../log.js";
import type { Moves } from "../moves/moves.js";
import type { Observability } from "../observability/observability.js";
import type { ReplicaService } from "../replicas/replica-service.js";
import type { Router } from "../routing/router.js";
import type { CancelRegistry } from "./cancel-registry.js";
import type { RegionCollations } from "./region-collations.js";
import type { SchemaDrift } from "./schema-drift.js";

/** What every session shares: configuration, routing, pools, cancel keys, the logger. */
export interface ProxyRuntime {
  readonly config: GeoConfig;
  readonly router: Router;
  readonly pools: RegionPools;
  readonly log: Logger;
  readonly cancels: CancelRegistry;
  /** ParameterStatus values the home region reported at start (server_version, encodings, ...). */
  readonly homeParameters: ReadonlyMap<string, string>;
  /** Each region's database default collation against home's: reads spanning a differing one are refused. */
  readonly collations: RegionCollations;
  /** Whether every region's copies of the configured tables are alike (SHOW SCHEMA, schema_drift). */
  readonly schemaDrift: SchemaDrift;
  /** Monotonic across the proxy: orders client Parses against backend copies of statements. */
  nextSequence(): number;
  /** `clientAddress`: the client's IP address, for commands only local clients may run under trust. */
  consoleContext(user: string, clientAddress?: string): ConsoleContext;
  /** Metrics, clients, health, alerts, transactions in doubt, and the admin port when configured. */
  readonly observability: Observability;
  /** Two-phase commit of writes across regions: coordinator, decision log, recovery. */
  readonly txn: TxnService;
  /** The directory in PostgreSQL, holds and moves: present with a `[directory_store]` section. */
  readonly moves?: Moves | undefined;
  /** What the operator command RESTRIPE runs with (docs/ids.md). */
  readonly restripe: RestripeContext;
  /** Health probes and replica pools: present when the topology lists a replica (docs/replicas.md). */
  readonly replicas?: ReplicaService | undefined;
  /** Statements the fast lane carried since start (session/fast-lane.ts), for tests and benchmarks. */
  readonly fastLane: { statements: number };
  /** True once shutdown began: idle sessions close, new ones are refused. */
  readonly shuttingDown: boolean;
}
