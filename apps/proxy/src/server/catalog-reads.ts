import type { Topology } from "@geo/core";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import type { Fact } from "../observability/alert-book.js";
import type { Router } from "../routing/router.js";
import { FunctionWatch } from "./function-watch.js";
import { SchemaDrift } from "./schema-drift.js";
import { SequenceIds } from "./sequence-ids.js";

/**
 * What the proxy reads from the regions' catalogs before it serves, and keeps reading: sequences
 * whose ids would collide (docs/ids.md), the database functions that read no table (so may be
 * called across regions), and whether every region's copies of the configured tables are alike
 * (SHOW SCHEMA).
 */
export class CatalogReads {
  private constructor(
    readonly sequenceIds: SequenceIds,
    readonly functionWatch: FunctionWatch,
    readonly schemaDrift: SchemaDrift,
  ) {}

  /** Reads each once from the regions reachable at start. */
  static async atStart(
    router: Router,
    pools: RegionPools,
    log: Logger,
    reachable: readonly string[],
    timeoutMs: number,
  ): Promise<CatalogReads> {
    const topology: Topology = router.topology;
    const sequenceIds = new SequenceIds(topology, pools, log);
    await sequenceIds.check(reachable, timeoutMs);
    const functionWatch = new FunctionWatch(router.functions, topology, pools, log);
    if (reachable.includes(topology.home.id)) await functionWatch.read(timeoutMs);
    router.onFunctionChange = () => functionWatch.changed();
    const schemaDrift = new SchemaDrift(topology, pools, log);
    await schemaDrift.check(timeoutMs, reachable);
    router.onSchemaChange = () => schemaDrift.soon();
    return new CatalogReads(sequenceIds, functionWatch, schemaDrift);
  }

  facts(): Fact[] {
    return [...this.sequenceIds.facts(), ...this.schemaDrift.facts()];
  }

  /** Reads the functions every minute and the tables' shapes every `schemaIntervalMs` until `close()`. */
  start(timeoutMs: number, schemaIntervalMs: number): void {
    this.schemaDrift.start(timeoutMs, schemaIntervalMs);
    this.functionWatch.start(timeoutMs);
  }

  async close(): Promise<void> {
    await this.schemaDrift.close();
    await this.functionWatch.close();
  }
}
